import ArgumentParser
import NavigationValuesSessions
import NavigationValuesStore

/// The flags of retention, shared by `serve` (which runs it every `--retention-interval`) and
/// `prune` (which runs it once, to the end).
struct RetentionFlags: ParsableArguments, FlagValues {
    @Option(
        .flag(
            "session-idle-timeout", "DURATION", "End a session unchanged and unused this long (default 30d; 0: never).")
    )
    var sessionIdleTimeout: String?
    @Option(
        .flag(
            "ended-retention", "DURATION",
            "Purge an ended session this long after its last change (default 30d; 0: never)."))
    var endedRetention: String?
    @Option(
        .flag(
            "history-keep-events", "N",
            "Keep at least the last N events of each session (default 10000; 0: no count rule)."))
    var historyKeepEvents: String?
    @Option(.flag("history-keep-days", "D", "Keep every event younger than D days (default 0: no age rule)."))
    var historyKeepDays: String?

    /// The policy the flags describe, over the defaults.
    static func policy(_ arguments: ParsedArguments) throws(UsageError) -> RetentionPolicy {
        var policy = RetentionPolicy(
            idleTimeout: .seconds(30 * 86_400), endedRetention: .seconds(30 * 86_400),
            compaction: CompactionRule(keepEvents: 10_000))
        if let idle = try arguments.duration("session-idle-timeout") { policy.idleTimeout = idle }
        if let retention = try arguments.duration("ended-retention") { policy.endedRetention = retention }
        if let events = try arguments.integer("history-keep-events", in: 0...Int.max) {
            policy.compaction.keepEvents = events == 0 ? nil : events
        }
        if let days = try arguments.integer("history-keep-days", in: 0...36_500) {
            policy.compaction.keepAge = days == 0 ? nil : .seconds(Int64(days) * 86_400)
        }
        return policy
    }
}
