import Foundation
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesSQLite

/// Checkpoints of the write-ahead log run off the writer, are counted, and keep the log bounded.
struct CheckpointTests {
    /// Bytes of `frames` frames of the log (a 24-byte header per 4,096-byte page, and the log's
    /// 32-byte header).
    func logBytes(frames: Int) -> Int { frames * (4096 + 24) + 32 }

    func configuration(threshold: Int, hardLimit: Int? = nil) -> SQLiteSessionStore.Configuration {
        var configuration = SQLiteSessionStore.Configuration()
        configuration.walCheckpointPages = threshold
        configuration.walHardLimitPages = hardLimit
        return configuration
    }

    /// A value of about 1 KB, so that each mutation writes pages.
    func largeValue(_ round: Int) -> String { "\"\(String(repeating: "v", count: 1_000))\(round)\"" }

    @Test func checkpointsRunAndTheLogStaysBoundedUnderSustainedWrites() async throws {
        try await withTemporaryDatabase { path in
            let store = try SQLiteSessionStore(path: path, configuration: configuration(threshold: 64))
            let sessions = (0..<16).map { SampleSession("s_\($0)") }
            for session in sessions { try await store.commit(session.creation) }
            var largestLog = 0
            for round in 2...120 {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for session in sessions {
                        let mutation = session.mutation(
                            Int64(round), [.setValue(session.root, key: "k\(round % 7)", json: largeValue(round))])
                        group.addTask { try await store.commit(mutation) }
                    }
                    try await group.waitForAll()
                }
                largestLog = max(largestLog, store.metrics.walBytes)
            }
            let metrics = store.metrics
            #expect(metrics.committedMutations == 16 * 120)
            #expect(metrics.checkpoints + metrics.writerCheckpoints > 0)
            #expect(metrics.pagesCheckpointed > 0)
            #expect(metrics.writerCPUSeconds > 0)
            #expect(metrics.checkpointerCPUSeconds > 0)
            #expect(metrics.pagesWritten > 640, "the writes wrote more than the hard limit in all")
            // The hard limit is four times the threshold; past it the writer forces a checkpoint
            // after the batch that crossed it, so the log never holds much more than that.
            #expect(largestLog > 0)
            #expect(largestLog <= logBytes(frames: 256 + 400), "largest log \(largestLog) bytes")
            await store.close()

            // The final checkpoint copied everything and removed the log.
            let logSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
            #expect(logSize == 0)
            let reopened = try SQLiteSessionStore(path: path)
            for session in sessions {
                let loaded = try #require(try await reopened.loadSession(session.id))
                #expect(loaded.record.version == 120)
                #expect(try await reopened.events(of: session.id, after: 0, limit: 1_000).count == 120)
            }
            await reopened.close()
        }
    }

    /// Background rounds keep up with the log long before it reaches the threshold, each as soon
    /// as a tenth of the threshold waits to be copied, so that no round has a whole cycle's pages
    /// to write and sync at once; the checkpointer syncs the database file after its rounds
    /// (SQLite syncs it only after a checkpoint that copied the whole log, none appended
    /// meanwhile), so that the writer's finishing step has only its own pages to sync. The writer
    /// finishes none here: its step comes only once the log reaches the threshold. (With rounds
    /// starting only at the threshold, nothing is copied here; without the checkpointer's own
    /// sync, `databaseSyncs` stays 0.)
    @Test func smallRoundsCopyTheLogBeforeItReachesTheThreshold() async throws {
        try await withTemporaryDatabase { path in
            let store = try SQLiteSessionStore(path: path, configuration: configuration(threshold: 2_000))
            let sample = SampleSession()
            try await store.commit(sample.creation)
            var seq: Int64 = 1
            // About 600 frames in all, in commits of a few pages each: three tenths of the
            // threshold, so that rounds start more than once. (A round that copies the whole log
            // while no commit runs lets the next one restart it: the writer's pages are counted.)
            while store.metrics.pagesWritten < 600 {
                seq += 1
                try await store.commit(
                    sample.mutation(seq, [.setValue(sample.root, key: "k\(seq)", json: largeValue(Int(seq)))]))
            }
            #expect(
                try await eventually(timeout: .seconds(60)) {
                    store.metrics.checkpoints >= 1 && store.metrics.pagesCheckpointed >= 200
                })
            #expect(try await eventually { (store.driver.checkpointer?.metrics.databaseSyncs ?? 0) >= 1 })
            let metrics = store.metrics
            #expect(metrics.walPages < 2_000)
            #expect(metrics.writerCheckpoints == 0, "the writer finishes a checkpoint only past the threshold")
            await store.close()
        }
    }

    /// Past the threshold, background rounds copy the log down to `backgroundTarget` frames
    /// before the writer finishes, so that each finishing step (which every queued commit waits
    /// for) copies and syncs only that and the frames of the commits since. Sixteen cycles of
    /// commits one at a time, each synced as a server's are (`--sync full`): the rounds before
    /// the threshold start at every 200 frames waiting, so the threshold finds 0-200 uncopied.
    /// (With the rest left to the writer as before, up to a quarter of `finishingFrames`, 250
    /// frames here, its steps copy 0-200 frames, and one of sixteen copies more than 128 but for
    /// a chance of about 1 in 1,000; a failing run prints what the steps copied.)
    @Test func backgroundRoundsLeaveTheWriterOnlyAFewBatchesFrames() async throws {
        try await withTemporaryDatabase { path in
            var configuration = configuration(threshold: 2_000)
            configuration.sync = .full
            let store = try SQLiteSessionStore(path: path, configuration: configuration)
            let checkpointer = try #require(store.driver.checkpointer)
            #expect(checkpointer.backgroundTarget == 64)
            let sample = SampleSession()
            try await store.commit(sample.creation)
            var seq: Int64 = 1
            // Sixteen thresholds' worth of frames: about 7,500 commits.
            while store.metrics.pagesWritten < 16 * 2_000 {
                seq += 1
                try await store.commit(
                    sample.mutation(seq, [.setValue(sample.root, key: "k\(seq % 50)", json: largeValue(Int(seq)))]))
            }
            let figures = checkpointer.metrics
            #expect(figures.restarts >= 10)
            // What the rounds left, 64 frames at most, plus a few commits' frames (a commit here
            // appends about 5): the writer's step comes after the batch that follows the rounds' end.
            #expect(
                figures.writerLargestCopy <= 64 + 64,
                "\(figures.writer) finishing steps copied \(figures.writerPagesCopied) frames, at most \(figures.writerLargestCopy) at once")
            // The store's figures (/metrics) report the same steps.
            let metrics = store.metrics
            #expect(metrics.writerCheckpointPages == figures.writerPagesCopied)
            #expect((metrics.writerCheckpointSeconds > 0) == (figures.writer > 0))
            await store.close()
        }
    }

    /// Eight writers, each committing again as soon as its commit returns, 149 times: about 1 KB
    /// a commit, so that the log fills a threshold of 64 frames many times over.
    func writeWithoutPause(_ store: SQLiteSessionStore, sessions: [SampleSession]) async throws {
        for session in sessions { try await store.commit(session.creation) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for session in sessions {
                group.addTask {
                    for seq in 2...150 {
                        try await store.commit(
                            session.mutation(
                                Int64(seq), [.setValue(session.root, key: "k\(seq % 5)", json: largeValue(seq))]))
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// What ``writeWithoutPause(_:sessions:)`` must leave: every commit made, the threshold filled
    /// many times over, the log restarted at least three times and bounded, no forced checkpoint.
    func expectRestartsCycleAfterCycle(_ metrics: StoreMetrics, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(metrics.committedMutations == 8 * 150, sourceLocation: sourceLocation)
        #expect(metrics.pagesWritten > 20 * 64, "the writes filled the threshold many times over", sourceLocation: sourceLocation)
        #expect(metrics.walRestarts >= 3, sourceLocation: sourceLocation)
        // Every restart cuts the file back to journal_size_limit (four times the threshold);
        // between two, the log holds a cycle's frames.
        #expect(metrics.walPages < 20 * 64, "\(metrics.walPages) frames in the log", sourceLocation: sourceLocation)
        #expect(metrics.forcedCheckpoints == 0, sourceLocation: sourceLocation)
    }

    /// Under writers that never pause, the log still restarts cycle after cycle and stays
    /// bounded, whichever part copied it last: a background round that caught up with it, or the
    /// writer's finishing step (which of the two depends on the machine's timing).
    @Test func theLogRestartsUnderWritesThatNeverPause() async throws {
        try await withTemporaryDatabase { path in
            // No forced checkpoint: only the background rounds and the writer's finishing steps.
            let store = try SQLiteSessionStore(
                path: path, configuration: configuration(threshold: 64, hardLimit: 1_000_000))
            let sessions = (0..<8).map { SampleSession("s_\($0)") }
            try await writeWithoutPause(store, sessions: sessions)
            expectRestartsCycleAfterCycle(store.metrics)
            await store.close()
            let reopened = try SQLiteSessionStore(path: path)
            for session in sessions {
                #expect(try await reopened.loadSession(session.id)?.record.version == 150)
            }
            await reopened.close()
        }
    }

    /// A checkpoint running beside writers that never pause rarely copies the whole log (commits
    /// append while it runs), so the log would never restart. The writer's finishing step, between
    /// two batches, copies the small rest while nothing is appended: with no background round at
    /// all, it alone restarts the log cycle after cycle. (With the step removed, the log is never
    /// checkpointed below the hard limit and never restarts.)
    @Test func theWritersFinishingStepAloneRestartsTheLog() async throws {
        try await withTemporaryDatabase { path in
            let store = try SQLiteSessionStore(
                path: path, configuration: configuration(threshold: 64, hardLimit: 1_000_000))
            let checkpointer = try #require(store.driver.checkpointer)
            checkpointer.allowBackgroundRounds(false)
            let sessions = (0..<8).map { SampleSession("s_\($0)") }
            try await writeWithoutPause(store, sessions: sessions)
            expectRestartsCycleAfterCycle(store.metrics)
            #expect(store.metrics.writerCheckpoints >= 3)
            #expect(checkpointer.metrics.passive == 0, "no background round ran")
            await store.close()
        }
    }

    @Test func aReaderHoldingTheLogMakesTheWriterForceACheckpointOnceItLetsGo() async throws {
        try await withTemporaryDatabase { path in
            let store = try SQLiteSessionStore(path: path, configuration: configuration(threshold: 16, hardLimit: 128))
            let sample = SampleSession()
            try await store.commit(sample.creation)
            var seq: Int64 = 1
            func write() async throws {
                seq += 1
                // Sixteen values of 4 KB: dozens of pages a commit, so that a handful of commits
                // reach the limits. In the ThreadSanitizer run of CI, beside the other suites, one
                // commit took seconds, and four values a commit needed more than 120 s.
                let value = "\"\(String(repeating: "w", count: 4_000))\(seq)\""
                try await store.commit(
                    sample.mutation(seq, (0..<16).map { .setValue(sample.root, key: "k\($0)", json: value) }))
            }

            // A reader (as an operator's sqlite3 shell might) keeps its snapshot open: no
            // checkpoint can copy the frames written after it, so the log grows past the limit,
            // and the writer's forced checkpoints report the reader, yet every commit succeeds.
            let reader = try Database(path: path, access: .readOnly)
            try reader.execute("BEGIN")
            #expect(try reader.fetchOne("SELECT count(*) FROM events") { $0.int(0) } == 1)
            #expect(
                try await eventually(timeout: .seconds(300)) {
                    try await write()
                    return store.metrics.busyForcedCheckpoints >= 1
                })
            #expect(store.metrics.walPages >= 128)
            // Background rounds report the reader too (their checkpoints stop at its snapshot),
            // but not always before the first forced one: when the rounds ran before the reader
            // began and handed the rest to the writer, the log can reach the hard limit before
            // they run again. They do once the log outgrows what the writer finishes itself.
            #expect(
                try await eventually(timeout: .seconds(300)) {
                    if store.metrics.partialCheckpoints + store.metrics.failedCheckpoints >= 1 { return true }
                    try await write()
                    return false
                })
            #expect(store.metrics.forcedCheckpoints == 0)
            // The reader still sees its snapshot.
            #expect(try reader.fetchOne("SELECT count(*) FROM events") { $0.int(0) } == 1)
            try reader.execute("COMMIT")

            // Once it lets go, the log is copied and restarts (by the passive checkpoints and the
            // writer's finishing step, or by the next forced one), and its file is cut back to
            // journal_size_limit at the first commit after the restart.
            #expect(
                try await eventually(timeout: .seconds(300)) {
                    try await write()
                    return store.metrics.walBytes <= logBytes(frames: 128)
                })
            let metrics = store.metrics
            #expect(metrics.walPages <= 128)
            #expect(metrics.walBytes <= logBytes(frames: 128))
            #expect(metrics.failedMutations == 0)
            #expect(try await store.loadSession(sample.id)?.record.version == seq)
            await store.close()
        }
    }

    @Test func aStoreInMemoryHasNoCheckpointer() async throws {
        let store = try SQLiteSessionStore(path: ":memory:", configuration: configuration(threshold: 1))
        let sample = SampleSession()
        try await store.commit(sample.creation)
        try await store.commit(sample.mutation(2, [.setValue(sample.root, key: "k", json: largeValue(2))]))
        #expect(store.metrics.checkpoints == 0)
        #expect(store.metrics.walBytes == 0)
        await store.close()
    }
}
