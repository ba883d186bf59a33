import ArgumentParser
import NavigationValuesAPI
import NavigationValuesSessions

/// `serve`'s flags for the limits on what clients can make the server spend: memory,
/// subscribers, creations, and the size of what sessions render and answer.
struct LimitFlags: ParsableArguments, FlagValues {
    @Option(
        .flag(
            "max-loaded-sessions", "N",
            "Sessions kept in memory; the least recently used idle ones unload (default 10000)."
        ))
    var maxLoadedSessions: String?
    @Option(
        .flag(
            "max-hot-sessions", "N",
            "Loaded sessions kept in full form; the least recently used idle ones are kept compact (default 10000)."
        ))
    var maxHotSessions: String?
    @Option(.flag("max-subscribers", "N", "Event subscribers at once, in total (default 10000)."))
    var maxSubscribers: String?
    @Option(.flag("max-subscribers-per-session", "N", "Event subscribers of one session at once (default 100)."))
    var maxSubscribersPerSession: String?
    @Option(
        .flag(
            "subscriber-buffer-bytes", "N",
            "Bytes of events a subscriber may fall behind before it is dropped (default 1048576)."))
    var subscriberBufferBytes: String?
    @Option(
        .flag(
            "create-rate", "R", "Sessions a client address may create per second without the admin token (default 20).")
    )
    var createRate: String?
    @Option(
        .flag(
            "create-burst", "N", "Sessions a client address may create at once without the admin token (default 200)."))
    var createBurst: String?
    @OptionGroup var createToken: CreateTokenFlags
    @Option(.flag("max-session-bytes", "N", "Bytes of JSON a whole session may render as (default 4194304)."))
    var maxSessionBytes: String?
    @Option(
        .flag("max-event-bytes", "N", "Bytes of JSON of one event or one mutation's answer (default 4194304)."))
    var maxEventBytes: String?
    @Option(.flag("max-default-bytes", "N", "Bytes of JSON of a schema's defaults, together (default 65536)."))
    var maxDefaultBytes: String?
    @Option(
        .flag("max-schema-entries", "N", "Entries a schema may declare, values and preferences (default 1000)."))
    var maxSchemaEntries: String?
    @Option(
        .flag(
            "max-page-bytes", "N", "Bytes of events in one page of history, long poll or catch-up (default 1048576)."))
    var maxPageBytes: String?
    @Option(
        .flag(
            "send-buffer-bytes", "N",
            "Kernel send buffer per connection, which a reader that stops fills (default 0: the kernel's)."))
    var sendBufferBytes: String?
    @Option(
        .flag(
            "max-db-bytes", "N", "Largest the database file may grow; writes past it answer 503 (default 0: no limit).")
    )
    var maxDbBytes: String?

    /// Sets the limits the flags give.
    static func apply(
        _ arguments: ParsedArguments, to configuration: inout NavigationValuesServer.Configuration
    ) throws(UsageError) {
        let bytes = 1...Int(Int32.max)
        if let value = try arguments.integer("max-loaded-sessions", in: 1...10_000_000) {
            configuration.service.maxLoadedSessions = value
        }
        if let value = try arguments.integer("max-hot-sessions", in: 1...10_000_000) {
            configuration.service.maxHotSessions = value
        }
        if let value = try arguments.integer("max-subscribers", in: 1...1_000_000) {
            configuration.subscribers.maxTotal = value
        }
        if let value = try arguments.integer("max-subscribers-per-session", in: 1...1_000_000) {
            configuration.subscribers.maxPerSession = value
        }
        if let value = try arguments.integer("subscriber-buffer-bytes", in: bytes) {
            configuration.subscribers.bufferBytes = value
        }
        if let value = try arguments.number("create-rate", in: 0.001...1_000_000) { configuration.createRate = value }
        if let value = try arguments.integer("create-burst", in: 1...10_000_000) { configuration.createBurst = value }
        if let token = try SecretFlags.value("create-token", in: arguments) { configuration.createToken = token }
        if let value = try arguments.integer("max-session-bytes", in: bytes) {
            configuration.service.limits.maxSessionBytes = value
        }
        if let value = try arguments.integer("max-event-bytes", in: bytes) {
            configuration.service.limits.maxEventBytes = value
        }
        if let value = try arguments.integer("max-default-bytes", in: 0...Int(Int32.max)) {
            configuration.service.limits.maxDefaultBytes = value
        }
        if let value = try arguments.integer("max-schema-entries", in: 0...1_000_000) {
            configuration.service.limits.maxSchemaEntries = value
        }
        if let value = try arguments.integer("max-page-bytes", in: bytes) { configuration.maxPageBytes = value }
        if let value = try arguments.integer("send-buffer-bytes", in: 0...Int(Int32.max)) {
            configuration.sendBufferSize = value == 0 ? nil : value
        }
        if let value = try arguments.integer("max-db-bytes", in: 0...Int.max) {
            configuration.maxDatabaseBytes = value == 0 ? nil : value
        }
    }
}
