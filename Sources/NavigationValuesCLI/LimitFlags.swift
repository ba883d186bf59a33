import NavigationValuesAPI
import NavigationValuesSessions

/// `serve`'s flags for the limits on what clients can make the server spend: memory,
/// subscribers, creations, and the size of what sessions render and answer.
enum LimitFlags {
    static let flags = [
        Flag(
            name: "max-loaded-sessions", valueName: "N",
            help: "Sessions kept in memory; the least recently used idle ones unload (default 10000)."),
        Flag(name: "max-subscribers", valueName: "N", help: "Event subscribers at once, in total (default 10000)."),
        Flag(
            name: "max-subscribers-per-session", valueName: "N",
            help: "Event subscribers of one session at once (default 100)."),
        Flag(
            name: "subscriber-buffer-bytes", valueName: "N",
            help: "Bytes of events a subscriber may fall behind before it is dropped (default 1048576)."),
        Flag(
            name: "create-rate", valueName: "R",
            help: "Sessions a client address may create per second without the admin token (default 20)."),
        Flag(
            name: "create-burst", valueName: "N",
            help: "Sessions a client address may create at once without the admin token (default 200)."),
    ] + SecretFlags.flags("create-token", help: "Creating a session needs this token (default: none).") + [
        Flag(
            name: "max-session-bytes", valueName: "N",
            help: "Bytes of JSON a whole session may render as (default 4194304)."),
        Flag(
            name: "max-event-bytes", valueName: "N",
            help: "Bytes of JSON of one event or one mutation's answer (default 4194304)."),
        Flag(
            name: "max-default-bytes", valueName: "N",
            help: "Bytes of JSON of a schema's defaults, together (default 65536)."),
        Flag(
            name: "max-schema-entries", valueName: "N",
            help: "Entries a schema may declare, values and preferences (default 1000)."),
        Flag(
            name: "max-page-bytes", valueName: "N",
            help: "Bytes of events in one page of history, long poll or catch-up (default 1048576)."),
        Flag(
            name: "send-buffer-bytes", valueName: "N",
            help: "Kernel send buffer per connection, which a reader that stops fills (default 0: the kernel's)."),
        Flag(
            name: "max-db-bytes", valueName: "N",
            help: "Largest the database file may grow; writes past it answer 503 (default 0: no limit)."),
    ]

    /// Sets the limits the flags give.
    static func apply(
        _ arguments: ParsedArguments, to configuration: inout NavigationValuesServer.Configuration
    ) throws(UsageError) {
        let bytes = 1...Int(Int32.max)
        if let value = try arguments.integer("max-loaded-sessions", in: 1...10_000_000) {
            configuration.service.maxLoadedSessions = value
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
