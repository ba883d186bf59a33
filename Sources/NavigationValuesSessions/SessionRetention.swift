import Foundation
import NavigationValuesStore
import NavigationValuesWire

/// What retention removes, and when, so that old data goes away. Every rule is off when nil.
public struct RetentionPolicy: Sendable, Equatable {
    /// An active session neither changed nor used for this long is ended (a `session.ended`
    /// event, as `DELETE` appends).
    public var idleTimeout: Duration?
    /// An ended session is purged (with its history and idempotency records) this long after its
    /// last change; its tombstone, which makes reads of its history 410 rather than 404, is
    /// forgotten this long after the purge.
    public var endedRetention: Duration?
    /// How much history each session keeps behind its latest snapshot.
    public var compaction = CompactionRule()
    /// Sessions ended, purged or compacted per pass at most, for each rule: one pass stays short.
    public var batchSize = 500

    public init(
        idleTimeout: Duration? = nil, endedRetention: Duration? = nil, compaction: CompactionRule = CompactionRule()
    ) {
        self.idleTimeout = idleTimeout
        self.endedRetention = endedRetention
        self.compaction = compaction
    }

    /// Whether any rule is on.
    public var isActive: Bool { idleTimeout != nil || endedRetention != nil || compaction.isActive }
}

/// What one pass of retention did.
public struct RetentionReport: Sendable, Equatable {
    /// Idle sessions ended.
    public var ended = 0
    /// Ended sessions purged.
    public var purged = 0
    /// Events deleted by compaction.
    public var compactedEvents = 0
    /// Tombstones and expired idempotency records deleted.
    public var expiredRecords = 0

    public init() {}

    /// Whether the pass did nothing.
    public var isEmpty: Bool { self == RetentionReport() }

    /// Whether a pass stopped at `policy.batchSize` for some rule, so another would find more.
    func mayHaveMore(than policy: RetentionPolicy) -> Bool {
        ended >= policy.batchSize || purged >= policy.batchSize || compactedEvents > 0
    }
}

/// Retention of a server's sessions (`RetentionPolicy`): ends idle sessions and purges old ended
/// ones through their actors, as any change is made, then compacts history and forgets expired
/// records in the store.
///
/// ```swift
/// let report = try await service.retention.run(RetentionPolicy(idleTimeout: .seconds(86_400)))
/// ```
public struct SessionRetention: Sendable {
    let environment: ServiceEnvironment
    /// The loaded sessions: what was used lately, and the actors the ends and purges run through.
    let sessions: SessionRegistry

    /// Runs one pass of `policy`: ends idle sessions and purges old ended ones through their
    /// actors (each is a mutation with its event, published as any other), then compacts history
    /// and forgets expired records in the store. A session changed since it was found is left
    /// alone (`If-Match`). Does nothing when the store offers no maintenance.
    ///
    /// - Throws: `StoreError` when the store cannot be read or written.
    public func run(_ policy: RetentionPolicy) async throws -> RetentionReport {
        var report = RetentionReport()
        guard let store = environment.store as? any SessionStoreMaintenance else { return report }
        let now = environment.now()
        if let idle = policy.idleTimeout {
            let before = now.addingTimeInterval(-idle.seconds)
            for stamp in try await store.sessions(in: .active, updatedBefore: before, limit: policy.batchSize) {
                if let used = sessions.lastUse(of: stamp.id), used >= before { continue }  // read recently
                if try await retire(stamp, purge: false) { report.ended += 1 }
            }
        }
        if let retention = policy.endedRetention {
            let before = now.addingTimeInterval(-retention.seconds)
            for stamp in try await store.sessions(in: .ended, updatedBefore: before, limit: policy.batchSize) {
                if try await retire(stamp, purge: true) { report.purged += 1 }
            }
            report.expiredRecords = try await store.removeExpiredRecords(tombstonesBefore: before)
        }
        if policy.compaction.isActive {
            report.compactedEvents = try await store.compactHistory(
                policy.compaction, now: now, limit: policy.batchSize)
        }
        return report
    }

    /// Runs passes until one finds nothing more to do (what `navigation-values prune` does).
    public func runToEnd(_ policy: RetentionPolicy) async throws -> RetentionReport {
        var total = RetentionReport()
        while true {
            let pass = try await run(policy)
            total.ended += pass.ended
            total.purged += pass.purged
            total.compactedEvents += pass.compactedEvents
            total.expiredRecords += pass.expiredRecords
            if !pass.mayHaveMore(than: policy) { return total }
        }
    }

    /// Ends (or purges) a session found by retention, if it is still at the version it was
    /// found at; a session that was not in memory is not kept there afterwards.
    private func retire(_ stamp: SessionStamp, purge: Bool) async throws -> Bool {
        let wasLoaded = sessions.isLoaded(stamp.id)
        defer { if !wasLoaded { sessions.unload(stamp.id) } }
        do {
            _ = try await sessions.perform(
                .end(purge: purge), on: stamp.id, context: CommandContext(credential: .admin, ifMatch: stamp.version))
            return true
        } catch let error as SessionError
            where [.versionMismatch, .gone, .notFound, .conflict].contains(error.code)
        {
            return false  // changed, ended or purged meanwhile: the next pass looks again
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
