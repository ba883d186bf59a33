import ArgumentParser
import Foundation
import HTTPServer
import Logging
import NavigationValues
import NavigationValuesAPI
import NavigationValuesPostgres
import NavigationValuesSQLite
import NavigationValuesSessions
import NavigationValuesStore

#if canImport(Glibc)
    import CHTTPSystem
    import Glibc
#endif

/// `navigation-values serve`: runs the server until SIGTERM or SIGINT.
struct Serve: Command {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the server.",
        discussion: """
            Serves the HTTP API. Prints one line, 'listening on http://H:P', to stdout once it accepts \
            connections (after 'metrics on http://H:P' with --metrics-port); a generated admin token is \
            printed once to stderr. Request logs go to stderr.
            SIGTERM or SIGINT: stops accepting, finishes requests in flight, closes streams, exits 0.
            With --tls-cert and --tls-key it serves HTTPS ('listening on https://H:P'), and SIGHUP reads \
            the two files again: new connections get the new pair, open ones keep theirs; a bad pair is \
            logged and the one in force stays.
            """)

    @Option(.flag("host", "H", "Address to listen on (default 127.0.0.1; 0.0.0.0 for all)."))
    var host: String?
    @Option(.flag("port", "P", "Port (default 8080; 0 picks a free one)."))
    var port: String?
    @Option(
        .flag(
            "metrics-port", "P",
            "Serve /metrics on this port instead of --port's (0 picks a free one; default: on --port)."
        ))
    var metricsPort: String?
    @Option(
        .flag(
            "metrics-host", "H",
            "Address of the --metrics-port listener (default: --host's; 127.0.0.1 keeps it local)."))
    var metricsHost: String?
    @Option(
        .flag(
            "db", "PATH|URL",
            "SQLite file (default ./navigation-values.sqlite; :memory: keeps nothing), or postgres://user@host:port/db (shared by several instances)."
        ),
        completion: .file())
    var db: String?
    @OptionGroup var adminToken: AdminTokenFlags
    @Option(.flag("schema", "FILE", "Default schema (JSON) for sessions created without one."), completion: .file())
    var schema: String?
    @Option(
        .flag("sync", "normal|full", "normal: writes survive a crash; full: also power loss."),
        completion: .list(SQLiteSessionStore.SyncMode.allCases.map(\.rawValue)))
    var sync: String?
    @Option(
        .flag(
            "wal-checkpoint-pages", "N",
            "SQLite: WAL pages after which the log is copied whole and restarts (copied off the writer in rounds of a tenth of it); four times it forces a checkpoint (default 10000)."
        ))
    var walCheckpointPages: String?
    @Option(
        .flag(
            "write-behind-events", "N",
            "Committed events whose state rows may wait to be written behind the log (default 1000; 0: written with each event)."
        ))
    var writeBehindEvents: String?
    @Option(
        .flag(
            "write-behind-ms", "MS",
            "How long an event's state rows may wait to be written behind the log (default 50)."))
    var writeBehindMs: String?
    @Option(
        .flag(
            "hold-write-behind-for-tests", "on|off",
            "Tests only: never write state rows behind the log on its own (reads and shutdown still do), so a test can kill the process between an event's commit and its state's."
        ),
        completion: .list(["on", "off"]))
    var holdWriteBehindForTests: String?
    @Option(
        .flag("log-format", "text|json", "Shape of log lines (default text)."),
        completion: .list(NavigationValuesLogHandler.Format.allCases.map(\.rawValue)))
    var logFormat: String?
    @Option(
        .flag("log-level", "LEVEL", "debug, info (default), warning or error."),
        completion: .list(NavigationValuesLogHandler.levelNames))
    var logLevel: String?
    @Option(
        .flag(
            "log-buffer-bytes", "N",
            "Bytes of log lines waiting to be written; past it lines are dropped and counted (default 1048576)."))
    var logBufferBytes: String?
    @Option(
        .flag(
            "cors-origins", "O,O",
            "Web origins browsers may call the API from (https://host[:port], comma-separated, or *; default none)."))
    var corsOrigins: String?
    @Option(
        .flag(
            "trusted-proxies", "CIDR,CIDR",
            "Balancers whose X-Forwarded-For names the client, for the creation limit and logs (default none)."))
    var trustedProxies: String?
    @Option(
        .flag(
            "tls-cert", "PEM",
            "Serve HTTPS with this certificate chain (PEM file: the certificate, then intermediates)."),
        completion: .file())
    var tlsCert: String?
    @Option(
        .flag(
            "tls-key", "PEM",
            "The private key of --tls-cert (PEM file, unencrypted; keep it readable by the server alone)."),
        completion: .file())
    var tlsKey: String?
    @Option(
        .flag(
            "ticket-lifetime", "S", "Seconds a stream ticket can open a stream after it is issued (default 60)."))
    var ticketLifetime: String?
    @Option(
        .flag(
            "max-write-wait", "S",
            "Seconds a write waits for its turn on a session other instances write (default 10, at most 10)."))
    var maxWriteWait: String?
    @Option(
        .flag(
            "handoff-lifetime", "S",
            "Seconds a hand-off code can be redeemed after it is made (default 300, 10 to 3600)."))
    var handoffLifetime: String?
    @Option(.flag("max-handoffs", "N", "Unused hand-off codes one session may have at once (default 5)."))
    var maxHandoffs: String?
    @Option(.flag("max-devices", "N", "Devices one session may gain by redeeming hand-offs (default 16)."))
    var maxDevices: String?
    @Option(.flag("max-observers", "N", "Observer tokens per session, and for every session (default 100)."))
    var maxObservers: String?
    @Option(
        .flag(
            "max-copied-events", "N", "Events an import or a fork may copy into its new session (default 100000)."))
    var maxCopiedEvents: String?
    @Option(
        .flag("max-test-export-bytes", "N", "Bytes of Swift source an export as a test may write (default 2097152)."))
    var maxTestExportBytes: String?
    @Option(
        .flag(
            "max-import-bytes", "N",
            "Bytes of an import's body, an export (default 67108864; other requests keep 1 MiB)."))
    var maxImportBytes: String?
    @Option(
        .flag(
            "max-large-body-memory", "N",
            "Bytes of bodies over 1 MiB (imports) held at once; past it 503 (default 268435456)."))
    var maxLargeBodyMemory: String?
    @Option(
        .flag(
            "max-stacks", "N", "Stacks a session holds at once: the main one, tabs and presentations (default 32)."))
    var maxStacks: String?
    @Option(.flag("max-presentation-depth", "N", "How deep presentations nest (default 8; 0: none)."))
    var maxPresentationDepth: String?
    @Option(.flag("max-batch-operations", "N", "Operations in one batch request (default 100)."))
    var maxBatchOperations: String?
    @OptionGroup var limits: LimitFlags
    @OptionGroup var retention: RetentionFlags
    @Option(
        .flag("retention-interval", "DURATION", "How often retention runs (default 60s; 0: never, see 'prune')."))
    var retentionInterval: String?

    /// What the flags ask for, checked.
    struct Settings {
        var configuration = NavigationValuesServer.Configuration()
        /// The lowest swift-log level written (`--log-level` names map onto swift-log's levels as
        /// ``NavigationValuesLogHandler/level(named:)`` says).
        var logLevel = Logger.Level.info
        var logFormat = NavigationValuesLogHandler.Format.text
        var logBufferBytes = 1024 * 1024

        init(_ arguments: ParsedArguments) throws(UsageError) {
            if let host = arguments["host"] { configuration.host = host }
            if let port = try arguments.integer("port", in: 0...65_535) { configuration.port = port }
            configuration.metricsPort = try arguments.integer("metrics-port", in: 0...65_535)
            configuration.metricsHost = arguments["metrics-host"]
            if configuration.metricsHost != nil, configuration.metricsPort == nil {
                throw UsageError("\(arguments.sources["metrics-host"] ?? "--metrics-host") needs --metrics-port")
            }
            if let path = arguments["db"] { configuration.databasePath = path }
            configuration.adminToken = try SecretFlags.value("admin-token", in: arguments)
            if let sync = try arguments.choice("sync", SQLiteSessionStore.SyncMode.allCases.map(\.rawValue)) {
                configuration.sync = SQLiteSessionStore.SyncMode(rawValue: sync) ?? .normal
            }
            if let pages = try arguments.integer("wal-checkpoint-pages", in: 1...1_000_000) {
                configuration.walCheckpointPages = pages
            }
            if let events = try arguments.integer("write-behind-events", in: 0...1_000_000) {
                configuration.writeBehind.maximumEvents = events
            }
            if let milliseconds = try arguments.integer("write-behind-ms", in: 1...60_000) {
                configuration.writeBehind.maximumDelay = .milliseconds(milliseconds)
            }
            if let hold = try arguments.choice("hold-write-behind-for-tests", ["on", "off"]) {
                configuration.writeBehind.isHeldForTests = hold == "on"
            }
            if let format = try arguments.choice(
                "log-format", NavigationValuesLogHandler.Format.allCases.map(\.rawValue))
            {
                logFormat = NavigationValuesLogHandler.Format(rawValue: format) ?? .text
            }
            if let level = try arguments.choice("log-level", NavigationValuesLogHandler.levelNames) {
                logLevel = NavigationValuesLogHandler.level(named: level) ?? .info
            }
            if let bytes = try arguments.integer("log-buffer-bytes", in: 4096...1_073_741_824) {
                logBufferBytes = bytes
            }
            if let origins = arguments["cors-origins"] {
                do {
                    configuration.crossOriginPolicy = try CrossOriginPolicy(
                        origins: origins.split(separator: ",").map(String.init))
                } catch {
                    throw UsageError("\(arguments.sources["cors-origins"] ?? "--cors-origins"): \(error)")
                }
            }
            if let proxies = arguments["trusted-proxies"] {
                do {
                    configuration.trustedProxies = try TrustedProxies(proxies.split(separator: ",").map(String.init))
                } catch {
                    throw UsageError("\(arguments.sources["trusted-proxies"] ?? "--trusted-proxies"): \(error)")
                }
            }
            configuration.tls = try Serve.loadTLS(arguments)
            if let seconds = try arguments.integer("ticket-lifetime", in: 1...3_600) {
                configuration.service.ticketLifetime = .seconds(seconds)
            }
            // At most PostgreSQL's statement timeout (10 s), which ends a longer wait for the row.
            if let seconds = try arguments.integer("max-write-wait", in: 1...10) {
                configuration.service.maxWriteWait = .seconds(seconds)
            }
            if let seconds = try arguments.integer("handoff-lifetime", in: 10...3_600) {
                configuration.service.handoffLifetime = .seconds(seconds)
            }
            if let count = try arguments.integer("max-handoffs", in: 1...1_000) {
                configuration.service.maxHandoffsPerSession = count
            }
            if let count = try arguments.integer("max-devices", in: 1...10_000) {
                configuration.service.maxDevicesPerSession = count
            }
            if let count = try arguments.integer("max-observers", in: 1...100_000) {
                configuration.service.maxObserversPerScope = count
            }
            if let count = try arguments.integer("max-copied-events", in: 1...10_000_000) {
                configuration.service.maxCopiedEvents = count
            }
            if let bytes = try arguments.integer("max-test-export-bytes", in: 65_536...Int(Int32.max)) {
                configuration.service.maxTestExportBytes = bytes
            }
            if let bytes = try arguments.integer("max-import-bytes", in: 1_048_576...4_294_967_296) {
                configuration.maxImportBytes = bytes
            }
            if let bytes = try arguments.integer("max-large-body-memory", in: 1_048_576...68_719_476_736) {
                configuration.maxLargeBodyBytesInFlight = bytes
            }
            try Serve.readStackLimits(arguments, into: &configuration.service.limits)
            try LimitFlags.apply(arguments, to: &configuration)
            configuration.retention = try RetentionFlags.policy(arguments)
            if let interval = try arguments.duration("retention-interval") {
                configuration.retentionInterval = interval
            }
            if let file = arguments["schema"] {
                let source = arguments.sources["schema"] ?? "--schema"
                configuration.service.defaultSchema = try Serve.loadSchema(file, source: source)
                do {
                    try configuration.service.limits.check(configuration.service.defaultSchema)
                } catch {
                    throw UsageError("\(source): '\(file)' passes a limit: \(error.detail)")
                }
            }
        }
    }

    /// The certificate and key of `--tls-cert` and `--tls-key`, which go together; nil without them.
    /// - Throws: `UsageError` for one without the other, or a pair OpenSSL refuses (and why).
    static func loadTLS(_ arguments: ParsedArguments) throws(UsageError) -> TLSIdentity? {
        let certificateSource = arguments.sources["tls-cert"] ?? "--tls-cert"
        let keySource = arguments.sources["tls-key"] ?? "--tls-key"
        switch (arguments["tls-cert"], arguments["tls-key"]) {
        case (nil, nil):
            return nil
        case (let certificate?, let key?):
            do {
                return try TLSIdentity(certificatePath: certificate, keyPath: key)
            } catch {
                throw UsageError("\(certificateSource), \(keySource): \(error)")
            }
        case (_?, nil):
            throw UsageError("\(certificateSource) needs --tls-key")
        case (nil, _?):
            throw UsageError("\(keySource) needs --tls-cert")
        }
    }

    /// Reads the TLS pair again on each SIGHUP, until cancelled; a refused pair is logged and the
    /// one in force stays.
    static func reloadOnHangup(_ identity: TLSIdentity, _ hangups: SignalCatcher, logger: Logger) -> Task<Void, Never> {
        Task {
            while (try? await hangups.next()) != nil {
                do {
                    try identity.reload()
                    logger.info(
                        "tls certificate reloaded",
                        metadata: [
                            "subject": .string(identity.subject),
                            "not_after": .stringConvertible(identity.notAfter ?? 0),
                        ])
                } catch {
                    logger.error("tls certificate reload refused; the pair in force stays", error: error)
                }
            }
        }
    }

    /// Reads and checks a schema file.
    /// - Throws: `UsageError` saying what is wrong with it and where.
    static func loadSchema(_ file: String, source: String) throws(UsageError) -> SessionSchema {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw UsageError("\(source): cannot read schema file '\(file)'")
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: [UInt8](data))
        } catch {
            throw UsageError("\(source): '\(file)' is not valid JSON: \(error)")
        }
        do {
            return try SessionSchema(json: json, pointer: "")
        } catch {
            let problems = error.fieldErrors.map { "\($0.pointer.isEmpty ? "/" : $0.pointer): \($0.detail)" }
            let detail = problems.isEmpty ? error.detail : problems.joined(separator: "; ")
            throw UsageError("\(source): '\(file)' is not a valid schema: \(detail)")
        }
    }

    /// Tunes glibc's allocator for a long-running server: by default `free` hands the
    /// top of a thread's heap back to the kernel (`madvise`) as soon as 256 KiB or so lie unused
    /// there, and a thread that allocates and frees a batch's worth at a time (the SQLite writer,
    /// the request workers) then pays a system call and a TLB shootdown on every other core per
    /// batch. Keeping up to 16 MiB free per heap, and serving blocks under 4 MiB from the heap
    /// rather than from their own mappings, takes those calls off the hot path; memory above that
    /// is still returned. Skipped when the operator tunes glibc through its own environment
    /// variables (`MALLOC_TRIM_THRESHOLD_`, `MALLOC_MMAP_THRESHOLD_`, `MALLOC_TOP_PAD_`).
    static func keepFreedMemoryForReuse() {
        #if canImport(Glibc)
            let environment = ProcessInfo.processInfo.environment
            let tuned = ["MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_"]
            guard !tuned.contains(where: { environment[$0] != nil }) else { return }
            _ = mallopt(M_MMAP_THRESHOLD, 4 << 20)
            _ = mallopt(M_TRIM_THRESHOLD, 16 << 20)
        #endif
    }

    /// `host` as a URL carries it: an IPv6 literal in brackets.
    static func urlHost(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    /// The database for logs: a PostgreSQL URL without its password.
    static func describe(_ database: String) -> String {
        PostgresSessionStore.isDatabaseURL(database) ? PostgresSessionStore.redacted(database) : database
    }

    func run(_ arguments: ParsedArguments) async throws {
        let settings = try Settings(arguments)
        // Lines are written to stderr by a thread of their own, batched; what is left is written
        // before the command returns (after a signal's shutdown, or a failure to start).
        let writer = LogWriter(fileDescriptor: STDERR_FILENO, maxBufferedBytes: settings.logBufferBytes)
        defer { writer.close() }
        // The process's logging, set once: every swift-log logger of the process writes through the
        // server's handler, and the server's own logger is one of them.
        let (format, level) = (settings.logFormat, settings.logLevel)
        LoggingSystem.bootstrap { _ in NavigationValuesLogHandler(format: format, level: level, writer: writer) }
        let logger = Logger(label: "navigation-values")
        var configuration = settings.configuration
        configuration.logger = logger
        // Catch the signals before the server starts, so that one sent right after the
        // 'listening on' line is never lost nor kills the process.
        let signals = SignalCatcher([SIGTERM, SIGINT])
        // SIGHUP reloads the TLS pair; without TLS it keeps its default action.
        let reloader = configuration.tls.map { Self.reloadOnHangup($0, SignalCatcher([SIGHUP]), logger: logger) }
        defer { reloader?.cancel() }
        Self.keepFreedMemoryForReuse()
        // A file size limit (ulimit -f) makes writes past it fail with EFBIG, which SQLite reports
        // as an error (503, /readyz not ready), instead of killing the process.
        signal(SIGXFSZ, SIG_IGN)
        let server: NavigationValuesServer
        do {
            server = try await NavigationValuesServer.start(configuration)
        } catch {
            throw CommandFailure("cannot start on \(Self.describe(configuration.databasePath)): \(error)")
        }
        if server.isAdminTokenGenerated {
            Console.error(
                "admin token (generated; pass --admin-token-file or NAVIGATION_VALUES_ADMIN_TOKEN_FILE to choose one): \(server.adminToken)"
            )
        }
        let host = Self.urlHost(configuration.host)
        logger.info(
            "started",
            metadata: [
                "db": .string(Self.describe(configuration.databasePath)), "sync": .string(configuration.sync.rawValue),
            ])
        if let metricsPort = server.metricsPort {
            Console.out(
                "metrics on http://\(Self.urlHost(configuration.metricsHost ?? configuration.host)):\(metricsPort)")
        }
        if let tls = configuration.tls {
            logger.info(
                "tls", metadata: ["subject": .string(tls.subject), "not_after": .stringConvertible(tls.notAfter ?? 0)])
        }
        Console.out("listening on \(configuration.tls == nil ? "http" : "https")://\(host):\(server.port)")
        let signal = try await signals.next()
        logger.info("stopping", metadata: ["signal": .stringConvertible(signal)])
        await server.shutdown()
        logger.info("stopped")
    }
}
