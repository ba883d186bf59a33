import CSQLite
import Dispatch
import Foundation
import Synchronization

/// Checkpoints of the write-ahead log (https://sqlite.org/wal.html#ckpt) away from commits.
///
/// The writer runs with `wal_autocheckpoint=0`; its write-ahead-log hook reports the frames in
/// the log after each commit (``committed(frames:)``). Once they reach `threshold` (and then each
/// time they grow by as many again), a PASSIVE
/// checkpoint runs on the checkpointer's own connection and serial queue: it copies what it can
/// into the database file (syncing it, under `synchronous=FULL` and `NORMAL` alike) without
/// taking the write lock and without waiting for readers, so commits never queue behind it.
///
/// The log restarts from its beginning at the first write transaction after a checkpoint has
/// copied all of it, and is then cut to `journal_size_limit`. Under a load that never pauses,
/// or while a reader keeps an old snapshot, passive checkpoints cannot finish and the log grows:
/// past `hardLimit` frames, the writer waits between two batches for a TRUNCATE checkpoint
/// (``enforceHardLimit()``), which waits at most `forcedWait` for readers; when readers still
/// hold the log, it is tried again a second later at the earliest. That is back-pressure:
/// commits queue behind it (behind a passive checkpoint still running, then at most
/// `forcedWait` for readers, once a second). No checkpoint can pass a reader's snapshot,
/// so while one reader holds its transaction open the log keeps every frame written since.
///
/// @unchecked because `connection` is used on its queue only; the rest is atomics and mutexes.
final class Checkpointer: @unchecked Sendable {
    /// Frames in the log that wake the checkpointer.
    let threshold: Int
    /// Frames in the log past which the writer forces a TRUNCATE checkpoint.
    let hardLimit: Int
    /// The longest a forced checkpoint waits for readers.
    let forcedWait: Duration
    private let connection: SerialConnection
    /// The path of the log file (`<database>-wal`).
    let logPath: String

    /// Frames in the log after the writer's latest commit.
    private let frames = Atomic<Int>(0)
    /// Counts the log's restarts seen by the writer, so pages checkpointed are counted once.
    private let generation = Atomic<Int>(0)
    private let isScheduled = Atomic<Bool>(false)
    /// The frames and generation of the log when the latest checkpoint was started; written by
    /// the writer's thread only.
    private let scheduledFrames = Atomic<Int>(0)
    private let scheduledGeneration = Atomic<Int>(-1)
    private let figures = Mutex(CheckpointFigures())
    /// The generation and backfilled frames after the latest checkpoint.
    private let lastBackfill = Mutex((generation: 0, backfilled: 0))
    private let nextForcedAttempt = Mutex(ContinuousClock.Instant.now)

    init(path: String, synchronous: Database.Synchronous, threshold: Int, hardLimit: Int, forcedWait: Duration) throws {
        // Only the forced and the final checkpoints wait for locks: at most `forcedWait`.
        let database = try Database(path: path, access: .readWrite, busyTimeout: forcedWait)
        // The checkpoint syncs the log and the database file as this connection's setting says.
        try database.execute("PRAGMA synchronous = \(synchronous.rawValue)")
        connection = SerialConnection(database, label: "NavigationValuesStore.checkpointer")
        self.threshold = max(1, threshold)
        self.hardLimit = max(self.threshold, hardLimit)
        self.forcedWait = forcedWait
        self.logPath = path + "-wal"
    }

    /// Called by the writer's hook after each of its commits, on the writer's thread.
    func committed(frames count: Int) {
        let previous = frames.exchange(count, ordering: .relaxed)
        if count < previous { generation.add(1, ordering: .relaxed) }
        guard count >= threshold else { return }
        // Past the threshold every commit would start one: each copies the threshold's worth of
        // new frames instead, as SQLite's own automatic checkpoints do (a checkpoint costs two
        // syncs and copies a page again each time it changed since), except in a log that
        // restarted since.
        let current = generation.load(ordering: .relaxed)
        if current == scheduledGeneration.load(ordering: .relaxed),
            count < scheduledFrames.load(ordering: .relaxed) + threshold
        {
            return
        }
        guard !isScheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        scheduledFrames.store(count, ordering: .relaxed)
        scheduledGeneration.store(current, ordering: .relaxed)
        connection.queue.async { self.runPassive() }
    }

    /// A PASSIVE checkpoint on the checkpointer's connection.
    private func runPassive() {
        let cpuStart = threadCPUSeconds()
        defer {
            isScheduled.store(false, ordering: .releasing)
            let spent = threadCPUSeconds() - cpuStart
            figures.withLock { $0.cpuSeconds += spent }
        }
        let generation = generation.load(ordering: .relaxed)
        guard let outcome = try? connection.onQueue({ $0.checkpoint(SQLITE_CHECKPOINT_PASSIVE) }) else { return }
        record(outcome, generation: generation, forced: false)
    }

    /// Called by the writer between batches, on its queue: past the hard limit, the writer waits
    /// for a TRUNCATE checkpoint on the checkpointer's queue (behind any passive one running),
    /// holding no lock meanwhile, so only readers can stop it (see the type's summary).
    func enforceHardLimit() {
        guard frames.load(ordering: .relaxed) >= hardLimit else { return }
        let now = ContinuousClock.now
        guard nextForcedAttempt.withLock({ $0 }) <= now else { return }
        connection.queue.sync {
            let generation = generation.load(ordering: .relaxed)
            let before = frames.load(ordering: .relaxed)
            guard var outcome = try? connection.onQueue({ $0.checkpoint(SQLITE_CHECKPOINT_TRUNCATE) }) else { return }
            if outcome.code == SQLITE_OK {
                // The log is now empty: everything in it was copied.
                outcome.frames = before
                outcome.backfilled = before
                record(outcome, generation: generation, forced: true)
                frames.store(0, ordering: .relaxed)
                self.generation.add(1, ordering: .relaxed)
            } else {
                nextForcedAttempt.withLock { $0 = now + .seconds(1) }
                record(outcome, generation: generation, forced: true)
            }
        }
    }

    private func record(_ outcome: Database.CheckpointOutcome, generation: Int, forced: Bool) {
        let copied = lastBackfill.withLock { last in
            let sameLog = last.generation == generation && outcome.backfilled >= last.backfilled
            let copied = sameLog ? outcome.backfilled - last.backfilled : outcome.backfilled
            last = (generation, outcome.backfilled)
            return copied
        }
        figures.withLock { figures in
            switch (outcome.code, forced) {
            case (SQLITE_OK, false):
                figures.passive += 1
                if outcome.backfilled < outcome.frames { figures.passivePartial += 1 }
            case (SQLITE_OK, true):
                figures.forced += 1
            case (SQLITE_BUSY, true), (SQLITE_LOCKED, true):
                figures.forcedBusy += 1
            case (SQLITE_BUSY, false), (SQLITE_LOCKED, false):
                figures.passiveBusy += 1
            default:
                figures.failed += 1
            }
            figures.pagesCheckpointed += copied
        }
    }

    /// The checkpoint figures so far, with the log's current size.
    var metrics: CheckpointFigures {
        var current = figures.withLock { $0 }
        current.logFrames = frames.load(ordering: .relaxed)
        var status = stat()
        current.logBytes = stat(logPath, &status) == 0 ? Int(status.st_size) : 0
        return current
    }

    /// The final checkpoint, once the writer and the readers are closed: everything in the log
    /// goes into the database file and the log is emptied; then the connection closes.
    func close(busyTimeout: Duration) async {
        _ = try? await connection.run { db in
            db.setBusyTimeout(busyTimeout)
            let generation = self.generation.load(ordering: .relaxed)
            let before = self.frames.load(ordering: .relaxed)
            var outcome = db.checkpoint(SQLITE_CHECKPOINT_TRUNCATE)
            if outcome.code == SQLITE_OK {
                outcome.frames = before
                outcome.backfilled = before
            }
            self.record(outcome, generation: generation, forced: false)
        }
        await connection.close()
    }
}

/// What the checkpointer did (see ``StoreMetrics``).
struct CheckpointFigures: Sendable, Equatable {
    var passive = 0
    var passivePartial = 0
    var passiveBusy = 0
    var forced = 0
    var forcedBusy = 0
    var failed = 0
    var pagesCheckpointed = 0
    var logFrames = 0
    var logBytes = 0
    var cpuSeconds: Double = 0
}

/// The calling thread's CPU time so far, in seconds (`CLOCK_THREAD_CPUTIME_ID`).
func threadCPUSeconds() -> Double {
    var time = timespec()
    guard clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time) == 0 else { return 0 }
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}
