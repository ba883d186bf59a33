import CSQLite
import Dispatch
import Foundation
import NavigationValuesStore
import Synchronization

/// Checkpoints of the write-ahead log (https://sqlite.org/wal.html#ckpt) that commits never wait
/// long for.
///
/// SQLite's automatic checkpoint runs inside whichever commit crosses its threshold: it syncs the
/// log, copies every page changed since the last one into the database file and syncs that file,
/// while every commit queued behind it waits (10-20 ms every few hundred commits on a small
/// machine, which was most of a paced load's p99). Here the writer runs with
/// `wal_autocheckpoint=0` and its write-ahead-log hook reports the frames in the log after each
/// commit (``committed(frames:)``). A checkpoint then runs in two parts:
///
/// 1. Background rounds: PASSIVE checkpoints on the checkpointer's own connection and serial
///    queue. They take no write lock and wait for no reader, so commits go on meanwhile; each
///    copies what the log held when it began. SQLite syncs the database file only at the end of
///    a checkpoint that copied the whole log, none appended meanwhile (rarely a round beside
///    commits), so after each round that copied pages the checkpointer syncs the file itself
///    (``syncDatabaseFile()``). Rounds start as soon as `roundFrames`
///    frames (a tenth of the threshold) wait to be copied, long before the log reaches the
///    threshold, so each of these syncs carries a tenth of a cycle's pages at most. Otherwise
///    the writer's finishing step below synced every page the cycle's rounds had copied: tens of
///    milliseconds on a large database, on the commit path, with the log's syncs waiting behind
///    it. Past the threshold, rounds run until what is left is at most `backgroundTarget`, a
///    few batches' frames: each round copies what the log held when it began, so the rest
///    shrinks to what commits append during one short round.
/// 2. Once the log holds `threshold` frames, the writer itself runs, between two batches, a
///    PASSIVE checkpoint of the small rest (``afterBatch(_:)``): a few pages and two short syncs.
///    Nothing is appended while it runs, so it copies the whole log, and the next write
///    transaction restarts the log from its beginning, overwriting the file in place (no new
///    blocks to allocate and journal, so the syncs of later commits stay cheap). Every commit
///    queued meanwhile waits for the step, so it copies little: with a quarter of the
///    threshold's worth left to it (the rule before), its sync of the database file took 3-8 ms
///    on a paced load, once a cycle; with `backgroundTarget` frames, about a millisecond.
///
/// Without the second part, a log under a load that never pauses is never copied whole (commits
/// append while a concurrent checkpoint runs), so it never restarts and grows.
///
/// Each finishing step still costs the writer a few milliseconds (the two syncs), so the
/// threshold sets how often commits see one: at SQLite's 1,000 frames, five times a second at 500
/// mutations/s, which a p99 sees; at the default 10,000, every couple of seconds.
///
/// Bounded: past `hardLimit` frames (a reader kept an old snapshot, so no checkpoint could pass
/// it), the writer waits between two batches for a RESTART checkpoint on the checkpointer's
/// connection, which waits at most `forcedWait` for readers and is tried again a second later
/// at the earliest when they still hold the log. That is back-pressure: commits queue behind it.
///
/// @unchecked because `connection` is used on its queue only; the rest is atomics and mutexes.
final class Checkpointer: @unchecked Sendable {
    /// Frames in the log past which the writer finishes a checkpoint (and the log restarts).
    let threshold: Int
    /// Frames not yet copied that start a background round, whatever the log's size: a tenth of
    /// the threshold, so that no round has a whole cycle's pages to write and sync at once.
    let roundFrames: Int
    /// The most frames the writer copies itself to finish a checkpoint (what background rounds
    /// left, plus what the writer appended since: a batch under load appends hundreds).
    let finishingFrames: Int
    /// What background rounds leave for the writer at most: ``writerShare`` frames (a quarter of
    /// the threshold, when that is smaller). The writer's step copies this plus what commits
    /// append before its next batch ends, which ``finishingFrames`` leaves room for.
    let backgroundTarget: Int
    /// Frames in the log past which the writer forces a RESTART checkpoint.
    let hardLimit: Int
    /// The longest a forced checkpoint waits for readers.
    let forcedWait: Duration
    /// Background rounds per wake-up. Then they hand the rest to the writer, and commits start
    /// more only once the rest outgrows ``finishingFrames`` or a reader stopped the writer's step.
    static let rounds = 4
    /// The least ``finishingFrames``, whatever the threshold: a batch of a few dozen mutations
    /// appends a few hundred frames, and a writer that could finish only less than its own
    /// batch appends would never finish under a load that never pauses.
    static let leastFinishingFrames = 256
    /// Frames background rounds leave for the writer's finishing step, at most: a few batches'
    /// under a paced load (a mutation appends two or three), so that the step's sync of the
    /// database file, which every queued commit waits for, carries a few hundred kilobytes.
    static let writerShare = 64
    private let connection: SerialConnection
    /// The path of the log file (`<database>-wal`).
    let logPath: String
    /// The database file, opened for reading only to sync it (-1 when it could not be opened:
    /// the writer's finishing step then syncs all that rounds copied).
    private let databaseFile: Int32

    /// Frames in the log after the writer's latest commit.
    private let frames = Atomic<Int>(0)
    /// Counts the log's restarts seen by the writer.
    private let generation = Atomic<Int>(0)
    /// True while background rounds are queued or running.
    private let isRunning = Atomic<Bool>(false)
    /// False stops new background rounds (``allowBackgroundRounds(_:)``).
    private let backgroundRoundsAllowed = Atomic<Bool>(true)
    /// The log generation whose background rounds last ended, handing the rest to the writer.
    private let handedOver = Atomic<Int>(-1)
    /// The state of the latest checkpoint: its log's generation and how many of its frames are
    /// copied into the database file.
    private let backfill = Mutex((generation: -1, backfilled: 0))
    private let figures = Mutex(CheckpointFigures())
    private let nextForcedAttempt = Mutex(ContinuousClock.Instant.now)

    init(
        path: String, synchronous: Database.Synchronous, threshold: Int, hardLimit: Int, forcedWait: Duration
    ) throws {
        // Only the forced and the final checkpoints wait for locks: at most `forcedWait`.
        let database = try Database(path: path, access: .readWrite, busyTimeout: forcedWait)
        // The checkpoint syncs the log and the database file as this connection's setting says.
        try database.execute("PRAGMA synchronous = \(synchronous.rawValue)")
        connection = SerialConnection(database, label: "NavigationValuesStore.checkpointer")
        self.threshold = max(1, threshold)
        self.roundFrames = max(1, self.threshold / 10)
        self.finishingFrames = max(Self.leastFinishingFrames, self.threshold / 2)
        self.backgroundTarget = max(1, min(Self.writerShare, self.threshold / 4))
        self.hardLimit = max(self.threshold * 2, hardLimit)
        self.forcedWait = forcedWait
        self.logPath = path + "-wal"
        self.databaseFile = open(path, O_RDONLY | O_CLOEXEC)
    }

    deinit {
        if databaseFile >= 0 { _ = Glibc.close(databaseFile) }
    }

    /// Called by the writer's hook after each of its commits, on the writer's thread, inside
    /// SQLite: quick, and never uses the writer's connection.
    func committed(frames count: Int) {
        let previous = frames.exchange(count, ordering: .relaxed)
        if count < previous {
            generation.add(1, ordering: .relaxed)
            figures.withLock { $0.restarts += 1 }
        }
        guard !isRunning.load(ordering: .relaxed), backgroundRoundsAllowed.load(ordering: .relaxed) else { return }
        let left = remaining(frames: count)
        if count < threshold {
            // Small rounds keep up with the log long before the threshold.
            guard left >= roundFrames else { return }
        } else {
            if left <= backgroundTarget { return }
            // Background rounds already ran on this log and handed the rest to the writer, which
            // finishes it at its next batch's end: more rounds now would only keep it from doing
            // so (it finishes only while none runs).
            if left <= finishingFrames, handedOver.load(ordering: .relaxed) == generation.load(ordering: .relaxed) {
                return
            }
        }
        guard !isRunning.exchange(true, ordering: .acquiringAndReleasing) else { return }
        connection.queue.async { self.runBackground() }
    }

    /// With `false`, no new background round starts, so that below the hard limit only the
    /// writer's finishing step checkpoints (tests show that this step alone restarts the log).
    func allowBackgroundRounds(_ allowed: Bool) {
        backgroundRoundsAllowed.store(allowed, ordering: .relaxed)
    }

    /// Frames of the current log not yet copied into the database file, by what the latest
    /// checkpoint reported.
    private func remaining(frames count: Int) -> Int {
        let current = generation.load(ordering: .relaxed)
        let last = backfill.withLock { $0 }
        return last.generation == current ? count - last.backfilled : count
    }

    /// PASSIVE checkpoints on the checkpointer's connection until what is left is small: below
    /// the threshold, less than `roundFrames`; past it, at most `backgroundTarget`, small enough
    /// for the writer to finish; or until the log restarted, or `rounds` ran. Only rounds past
    /// the threshold hand the rest over to the writer: the writer's step waits for them, and
    /// not for those before (which would otherwise leave it up to a round's frames to copy).
    private func runBackground() {
        let cpuStart = threadCPUSeconds()
        var handsOver = false
        defer {
            let spent = threadCPUSeconds() - cpuStart
            figures.withLock { $0.cpuSeconds += spent }
            if handsOver { handedOver.store(generation.load(ordering: .relaxed), ordering: .relaxed) }
            isRunning.store(false, ordering: .releasing)
        }
        for _ in 0..<Self.rounds {
            let generation = generation.load(ordering: .relaxed)
            handsOver = frames.load(ordering: .relaxed) >= threshold
            guard let outcome = try? connection.onQueue({ $0.checkpoint(SQLITE_CHECKPOINT_PASSIVE) }) else { return }
            let copied = record(outcome, generation: generation, kind: .background)
            guard outcome.code == SQLITE_OK else { return }
            if copied > 0 { syncDatabaseFile() }
            // The writer restarted the log meanwhile: nothing more to do in this one.
            guard generation == self.generation.load(ordering: .relaxed) else { return }
            let count = frames.load(ordering: .relaxed)
            if remaining(frames: count) <= (count >= threshold ? backgroundTarget : roundFrames - 1) { return }
        }
    }

    /// Syncs what a round wrote into the database file (SQLite syncs it only after a checkpoint
    /// that copied the whole log, none appended meanwhile), here rather than in the writer's
    /// finishing step. Only an extra sync: a failure is left to SQLite's own, which reports it.
    private func syncDatabaseFile() {
        guard databaseFile >= 0 else { return }
        _ = fdatasync(databaseFile)
        figures.withLock { $0.databaseSyncs += 1 }
    }

    /// Called by the writer between batches, on its queue, with its connection. Finishes a
    /// checkpoint the background rounds left small; past the hard limit, waits for a forced one.
    func afterBatch(_ db: Database) {
        let count = frames.load(ordering: .relaxed)
        guard count >= threshold else { return }
        if count >= hardLimit {
            forceRestart()
            return
        }
        guard !isRunning.load(ordering: .acquiring) else { return }
        let left = remaining(frames: count)
        guard left <= finishingFrames else { return }
        let cpuStart = threadCPUSeconds()
        let started = ContinuousClock.now
        let generation = generation.load(ordering: .relaxed)
        let outcome = db.checkpoint(SQLITE_CHECKPOINT_PASSIVE)
        let copied = record(outcome, generation: generation, kind: .writer)
        // A reader kept the writer from copying it all: background rounds take over again.
        if outcome.code != SQLITE_OK || outcome.backfilled < outcome.frames {
            handedOver.store(-1, ordering: .relaxed)
        }
        let spent = threadCPUSeconds() - cpuStart
        let elapsed = (ContinuousClock.now - started).seconds
        figures.withLock { figures in
            figures.writerCheckpointCPUSeconds += spent
            figures.writerCheckpointSeconds += elapsed
            figures.writerLongestCheckpointSeconds = max(figures.writerLongestCheckpointSeconds, elapsed)
            figures.writerPagesCopied += copied
            figures.writerLargestCopy = max(figures.writerLargestCopy, copied)
        }
    }

    /// A RESTART checkpoint on the checkpointer's queue (behind background rounds still
    /// running), at most once a second while readers keep stopping it.
    private func forceRestart() {
        let now = ContinuousClock.now
        guard nextForcedAttempt.withLock({ $0 }) <= now else { return }
        connection.queue.sync {
            let generation = generation.load(ordering: .relaxed)
            guard let outcome = try? connection.onQueue({ $0.checkpoint(SQLITE_CHECKPOINT_RESTART) }) else { return }
            record(outcome, generation: generation, kind: .forced)
            if outcome.code != SQLITE_OK { nextForcedAttempt.withLock { $0 = now + .seconds(1) } }
        }
    }

    private enum Kind { case background, writer, forced, final }

    /// Counts a checkpoint; returns the frames it copied.
    @discardableResult
    private func record(_ outcome: Database.CheckpointOutcome, generation: Int, kind: Kind) -> Int {
        let copied = backfill.withLock { last in
            let sameLog = last.generation == generation && outcome.backfilled >= last.backfilled
            let copied = sameLog ? outcome.backfilled - last.backfilled : outcome.backfilled
            if outcome.code == SQLITE_OK { last = (generation, outcome.backfilled) }
            return outcome.code == SQLITE_OK ? copied : 0
        }
        let complete = outcome.backfilled >= outcome.frames
        figures.withLock { figures in
            figures.pagesCheckpointed += copied
            switch (kind, outcome.code) {
            case (.background, SQLITE_OK), (.final, SQLITE_OK):
                figures.passive += 1
                if !complete { figures.passivePartial += 1 }
            case (.writer, SQLITE_OK):
                figures.writer += 1
                if !complete { figures.writerPartial += 1 }
            case (.forced, SQLITE_OK):
                figures.forced += 1
            case (.forced, SQLITE_BUSY), (.forced, SQLITE_LOCKED):
                figures.forcedBusy += 1
            case (.writer, _):
                figures.writerFailed += 1
            case (.forced, _):
                figures.forcedFailed += 1
            case (.background, _), (.final, _):
                figures.failed += 1
            }
        }
        return copied
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
            var outcome = db.checkpoint(SQLITE_CHECKPOINT_TRUNCATE)
            if outcome.code == SQLITE_OK {
                // The log is empty now: all of it was copied.
                let before = self.frames.load(ordering: .relaxed)
                outcome.frames = before
                outcome.backfilled = before
            }
            self.record(outcome, generation: generation, kind: .final)
        }
        await connection.close()
    }
}

/// What the checkpointer did (see ``StoreMetrics``).
struct CheckpointFigures: Sendable, Equatable {
    var passive = 0
    var passivePartial = 0
    var writer = 0
    var writerPartial = 0
    var writerFailed = 0
    var forced = 0
    var forcedBusy = 0
    var forcedFailed = 0
    var failed = 0
    var restarts = 0
    /// Syncs of the database file by the checkpointer after its rounds.
    var databaseSyncs = 0
    var pagesCheckpointed = 0
    var logFrames = 0
    var logBytes = 0
    var cpuSeconds: Double = 0
    var writerCheckpointCPUSeconds: Double = 0
    /// Wall time of the writer's finishing steps (commits queued meanwhile wait for them), in
    /// all and the longest.
    var writerCheckpointSeconds: Double = 0
    var writerLongestCheckpointSeconds: Double = 0
    /// Frames the writer's finishing steps copied, in all and the most one step copied.
    var writerPagesCopied = 0
    var writerLargestCopy = 0
}
