/// Figures about the store's writes since it opened, for `/metrics`.
///
/// A *batch* is one transaction of the group commit: every mutation queued while the previous
/// transaction ran. Commit latency runs from `commit(_:)` being called to its caller resuming.
public struct StoreMetrics: Sendable, Equatable {
    /// Upper bounds, in seconds, of the commit-latency histogram's buckets (Prometheus `le`).
    public static let latencyBucketBounds: [Double] = [
        0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
    ]

    /// Mutations committed and acknowledged.
    public var committedMutations = 0
    /// Mutations that failed (conflicts, invalid data, an unavailable database).
    public var failedMutations = 0
    /// Of ``failedMutations``, the conflicts: the session had moved on (another writer committed
    /// first) or a key was taken. A command refused so runs again in its turn (``turns``).
    public var conflicts = 0
    /// Turns taken on a session (``SessionStore/beginTurn(on:until:)``): writers that met a
    /// conflict and waited in the database for the others before they ran again.
    public var turns = 0
    /// Time spent waiting for those turns, in seconds.
    public var turnWaitSeconds: Double = 0
    /// Transactions run by the group commit.
    public var batches = 0
    /// Mutations those transactions took (the others committed in a turn, ``turns``).
    public var batchedMutations = 0
    /// Mutations in the largest batch so far.
    public var largestBatch = 0
    /// Sum of every mutation's commit latency, in seconds (Prometheus `_sum`).
    public var commitLatencySum: Double = 0
    /// The longest commit latency seen, in seconds.
    public var commitLatencyMax: Double = 0
    /// How many commit latencies fell at or under each of ``latencyBucketBounds``, cumulative
    /// as Prometheus buckets are; the `+Inf` bucket is `committedMutations + failedMutations`.
    public var commitLatencyBuckets = [Int](repeating: 0, count: latencyBucketBounds.count)
    /// Sum of the time spent inside batches (BEGIN to COMMIT), in seconds.
    public var batchDurationSum: Double = 0
    /// Database pages the writer has written (SQLite: WAL frames appended by commits); 0 for a
    /// store that cannot count them (PostgreSQL).
    public var pagesWritten = 0
    /// PASSIVE checkpoints of the write-ahead log run by the checkpointer's own thread (SQLite; 0
    /// on PostgreSQL), the final one at close included.
    public var checkpoints = 0
    /// Of ``checkpoints``, those that left frames in the log uncopied (commits appended while
    /// they ran, or a reader held an older snapshot).
    public var partialCheckpoints = 0
    /// Checkpoints of the checkpointer's thread that could not start (another one held the
    /// checkpoint lock) or failed.
    public var failedCheckpoints = 0
    /// PASSIVE checkpoints the writer ran between batches to copy the little the checkpointer's
    /// left, so that the log restarts.
    public var writerCheckpoints = 0
    /// Of ``writerCheckpoints``, those that left frames uncopied (a reader held an older
    /// snapshot).
    public var partialWriterCheckpoints = 0
    /// Checkpoints the writer tried between batches that could not start or failed.
    public var failedWriterCheckpoints = 0
    /// Times the write-ahead log restarted from its beginning (after a checkpoint copied all of
    /// it).
    public var walRestarts = 0
    /// RESTART checkpoints the writer forced because the log passed its hard limit.
    public var forcedCheckpoints = 0
    /// Forced checkpoints that readers stopped (they are tried again a second later at most).
    public var busyForcedCheckpoints = 0
    /// Forced checkpoints that failed for another reason than readers (an I/O error).
    public var failedForcedCheckpoints = 0
    /// Pages copied from the write-ahead log into the database file by checkpoints.
    public var pagesCheckpointed = 0
    /// Frames in the write-ahead log after the latest commit.
    public var walPages = 0
    /// Size of the write-ahead-log file in bytes (0 when there is none).
    public var walBytes = 0
    /// CPU time, in seconds, of the thread running the group commit while it ran batches.
    public var writerCPUSeconds: Double = 0
    /// CPU time, in seconds, of the checkpointer's thread while it ran checkpoints (SQLite).
    public var checkpointerCPUSeconds: Double = 0
    /// Of ``writerCPUSeconds``, the writer's checkpoints between batches.
    public var writerCheckpointCPUSeconds: Double = 0
    /// Wall time, in seconds, of the writer's checkpoints between batches (SQLite), which the
    /// commits queued meanwhile wait for: their copies and syncs.
    public var writerCheckpointSeconds: Double = 0
    /// Pages the writer's checkpoints between batches copied into the database file (SQLite).
    public var writerCheckpointPages = 0

    /// Events committed whose state changes are not yet written (log-first commits, the state
    /// written behind): now.
    public var stateLagEvents = 0
    /// Sessions those events belong to: now.
    public var stateLagSessions = 0
    /// How long the oldest of them has waited, in seconds: now.
    public var stateLagSeconds: Double = 0
    /// Transactions that wrote state behind the log.
    public var stateWrites = 0
    /// Sessions those transactions wrote (each its changes coalesced).
    public var stateWriteSessions = 0
    /// Events whose state changes they wrote (or a catch-up replayed).
    public var stateWriteEvents = 0
    /// Sessions whose state write failed (its state was not where its changes start): each is
    /// brought up to its log by replaying it instead.
    public var stateWriteFailures = 0
    /// Sessions read with their state behind their log and no changes held to catch it up (the
    /// process that committed the events stopped first): their events were replayed.
    public var stateCatchUps = 0

    /// Creates empty figures.
    public init() {}

    /// Mutations per batch on average; 0 before the first batch.
    public var averageBatchSize: Double {
        batches == 0 ? 0 : Double(batchedMutations) / Double(batches)
    }

    mutating func recordBatch(size: Int, duration: Double) {
        batches += 1
        batchedMutations += size
        largestBatch = max(largestBatch, size)
        batchDurationSum += duration
    }

    mutating func recordCommit(latency: Double, error: (any Error)?) {
        if error == nil { committedMutations += 1 } else { failedMutations += 1 }
        if let error = error as? StoreError, error.code == .conflict { conflicts += 1 }
        commitLatencySum += latency
        commitLatencyMax = max(commitLatencyMax, latency)
        for (index, bound) in Self.latencyBucketBounds.enumerated() where latency <= bound {
            commitLatencyBuckets[index] += 1
        }
    }
}
