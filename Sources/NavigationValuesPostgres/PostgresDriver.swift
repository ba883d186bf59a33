import Dispatch
import Foundation
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// The SQL store on PostgreSQL, shared by any number of server instances: the database decides
/// the order of each session's writes.
///
/// ```swift
/// let store = try await PostgresSessionStore.open(url: "postgres://nv@127.0.0.1:5432/nv")
/// try await store.commit(mutation)
/// ```
public typealias PostgresSessionStore = SQLSessionStore<PostgresDriver>

/// PostgreSQL under ``SQLSessionStore``, on libpq:
///
/// - Group commit: a batch is sent as one pipeline (BEGIN, every mutation's prepared statements,
///   COMMIT) and answered in one round trip. A mutation that fails is taken out and the others
///   are sent again, so one failure fails only its own caller. A request of several mutations (a
///   copied history) runs in a transaction of its own, sent in chunks.
/// - One truth across instances: a mutation's version check locks the session's row and checks
///   it on the server, and `(session, seq)` is the events' primary key; a check that a statement
///   changed one row runs on the server too (Migrations/postgres/0008). A writer's turn
///   (``SQLSessionStore/beginTurn(on:until:)``) holds the row on a connection of its own while
///   its instance reloads the session and checks its command again; a batch with a mutation of
///   that session waits for it.
/// - Fan-out: each commit sends `NOTIFY navigation_values_events` with `(session, seq)` per
///   mutation (one notification carries many lines); ``commitNotices()`` yields the other
///   instances' commits, read by a listening connection.
/// - Faults: a lost connection fails calls with `.unavailable` and is opened again on a later
///   call (after `reconnectDelay`); the listener reconnects by itself and then yields
///   ``CommitNotice/mayHaveMissed``.
///
/// libpq calls block, so they run on the driver's own serial queues and listener thread, never on
/// Swift's cooperative pool.
public final class PostgresDriver: SQLDriver {
    /// How the store connects.
    public struct Configuration: Sendable {
        /// Read connections (the writer has one of its own, the listener another).
        public var readerCount = 4
        /// The most mutations one group-commit transaction takes.
        public var maximumBatchSize = 500
        /// How long an idempotency record is kept (docs/API.md: 24 h).
        public var idempotencyLifetime: Duration = .seconds(24 * 60 * 60)
        /// The clock for idempotency expiry and purge tombstones.
        public var now: @Sendable () -> Date = { Date() }
        /// The longest a statement may run on the server (`statement_timeout`), and a round
        /// trip may take before the connection counts as lost.
        public var statementTimeout: Duration = .seconds(10)
        /// How long after a failed connection attempt calls fail at once before the next attempt.
        public var reconnectDelay: Duration = .milliseconds(500)
        /// Whether to listen for other instances' commits (``commitNotices()``).
        public var listens = true
        /// Whether to apply pending migrations at open (`migrate` and `serve`); when false, a
        /// database with pending migrations is refused (`replay`).
        public var migrates = true
        /// Connections for writers' turns (``SQLSessionStore/beginTurn(on:until:)``): how many
        /// writers of this instance may wait in the database for a session at once. More wait for
        /// a connection, within their own deadline.
        public var turnConnectionCount = 4
        /// How far the state rows may lag the event log (log-first commits); `.inline` (the
        /// default here; the server's is `.standard`) writes them in each mutation's transaction.
        /// Whatever this instance's setting, it reads a session whose state another instance left
        /// behind its log by replaying the events after it.
        public var writeBehind: WriteBehind = .inline

        /// The defaults.
        public init() {}
    }

    /// The channel every commit notifies: payload lines `INSTANCE SESSION SEQ`, plus ` JSON`
    /// (the event) for a purge, whose event is not stored.
    static let channel = "navigation_values_events"

    /// The connection string or URL the store was opened with (it may hold a password: never log it).
    let url: String
    let configuration: Configuration
    public let options: SQLStoreOptions
    /// Tells this store's own notifications from other instances'.
    let instance: String
    let writer: PostgresLink
    let readers: [PostgresLink]
    private let nextReader = Mutex(0)
    let listener: PostgresListener?
    /// Connections for writers' turns, lent one turn at a time.
    let turns: TurnLinks

    /// Connects, checks the server (PostgreSQL 14 or newer, for pipeline mode) and applies
    /// pending migrations. Blocks while it does.
    ///
    /// - Throws: ``StoreError``: `.unavailable` when the server cannot be reached,
    ///   `.migrationRefused` when the database's schema does not match this binary.
    public init(url: String, configuration: Configuration = Configuration()) throws {
        let first = try PostgresConnection(url: url)
        guard first.serverMajorVersion >= 14 else {
            throw StoreError(
                code: .unavailable, message: "PostgreSQL \(first.serverMajorVersion) is too old; 14 or newer is needed")
        }
        if configuration.migrates {
            try PostgresMigrator().migrate(first)
        } else {
            let pending = try PostgresMigrator().pendingMigrations(in: first)
            guard pending.isEmpty else {
                throw StoreError(
                    code: .migrationRefused,
                    message: "the database needs migrations \(pending.map(\.fileName)); run `navigation-values migrate`"
                )
            }
        }
        self.url = url
        self.configuration = configuration
        options = SQLStoreOptions(
            maximumBatchSize: configuration.maximumBatchSize, idempotencyLifetime: configuration.idempotencyLifetime,
            now: configuration.now, writeBehind: configuration.writeBehind)
        instance = "i" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        let timeout = configuration.statementTimeout
        let setUp: (PostgresConnection) throws -> Void = { connection in
            try connection.query("SELECT set_config('statement_timeout', $1, false)", ["\(timeout.milliseconds)"])
        }
        let linkTimeout = timeout + .seconds(5)
        writer = PostgresLink(
            url: url, label: "NavigationValuesStore.postgres.writer", timeout: linkTimeout,
            reconnectDelay: configuration.reconnectDelay, setUp: setUp)
        readers = (0..<max(1, configuration.readerCount)).map { index in
            PostgresLink(
                url: url, label: "NavigationValuesStore.postgres.reader.\(index)", timeout: linkTimeout,
                reconnectDelay: configuration.reconnectDelay, setUp: setUp)
        }
        listener =
            configuration.listens
            ? PostgresListener(url: url, channel: Self.channel, instance: instance, timeout: linkTimeout) : nil
        // A turn's transaction waits for its session's row, then holds it while the instance
        // checks its command: a connection whose holder stops answering gives the row up.
        let turnSetUp: (PostgresConnection) throws -> Void = { connection in
            try setUp(connection)
            try connection.query(
                "SELECT set_config('idle_in_transaction_session_timeout', $1, false)", ["\(timeout.milliseconds)"])
        }
        turns = TurnLinks(
            (0..<max(1, configuration.turnConnectionCount)).map { index in
                PostgresLink(
                    url: url, label: "NavigationValuesStore.postgres.turn.\(index)", timeout: linkTimeout,
                    reconnectDelay: configuration.reconnectDelay, setUp: turnSetUp)
            })
    }

    public var dialect: any SQLDialect { PostgresDialect() }

    public var isShared: Bool { true }

    public func commitNotices() -> AsyncStream<CommitNotice> {
        listener?.notices ?? AsyncStream { $0.finish() }
    }

    // MARK: - Connections

    /// Runs `body` on a read connection, taken in turn.
    public func read<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let index = nextReader.withLock { next in
            defer { next = (next + 1) % readers.count }
            return next
        }
        return try await readers[index].run(body)
    }

    public func write<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        try await writer.run(body)
    }

    public func enqueueOnWriter(_ work: @escaping @Sendable () -> Void) {
        writer.queue.async(execute: work)
    }

    public func close() async {
        await writer.close()
        for reader in readers { await reader.close() }
        await turns.close()
        await listener?.stop()
    }

    // MARK: - Turns

    public func holdConnection(until deadline: ContinuousClock.Instant) async throws -> HeldLink? {
        try await turns.take(until: deadline)
    }

    /// The write's statements, its notifications and COMMIT, in one pipeline, in the transaction
    /// the turn opened.
    public func commitTurn(_ write: PlannedWrite, on connection: PostgresConnection) throws {
        let statements =
            write.steps.map(Self.statement(for:)) + notifications(for: Array(write.mutations.suffix(1)))
            + [PostgresConnection.Statement("COMMIT")]
        do {
            _ = try PostgresConnection.rows(of: try connection.pipeline(statements))
        } catch {
            _ = try? connection.query("ROLLBACK")
            throw error
        }
    }

    /// The write's statements in one pipeline, in the transaction the turn opened, left open.
    public func writeInTurn(_ write: PlannedWrite, on connection: PostgresConnection) throws {
        do {
            _ = try PostgresConnection.rows(of: try connection.pipeline(write.steps.map(Self.statement(for:))))
        } catch {
            _ = try? connection.query("ROLLBACK")
            throw error
        }
    }

    /// Drops every connection as if the server had gone away, so the next calls reconnect (tests).
    func dropConnections() async {
        await writer.disconnect()
        for reader in readers { await reader.disconnect() }
    }

    public func afterBatch() {}

    public func addFigures(to metrics: inout StoreMetrics) {}

    // MARK: - Group commit

    public func commitBatch(_ writes: [PlannedWrite], cleanup: WriteStep?) -> [Result<Void, any Error>] {
        do {
            return try writer.onQueue { connection in
                var results = [Result<Void, any Error>?](repeating: nil, count: writes.count)
                // A request of one mutation, or a session's state written behind its log (no
                // mutation), shares the batch's transaction; a copied history has its own.
                let singles = writes.indices.filter { writes[$0].mutations.count <= 1 }
                let batch = runBatch(singles.map { writes[$0] }, cleanup: cleanup, on: connection)
                for (index, result) in zip(singles, batch) { results[index] = result }
                for index in writes.indices where writes[index].mutations.count > 1 {
                    results[index] = runCopy(writes[index], on: connection)
                }
                return results.map { $0 ?? .failure(StoreError(code: .failed, message: "the mutation was not run")) }
            }
        } catch {
            return Array(repeating: .failure(error), count: writes.count)
        }
    }

    /// Statements a copy sends per round trip: bounded, so that each round trip ends well within
    /// the connection's timeout however long the copy.
    static let copyChunkSize = 2_000

    /// Commits every mutation of a request of several (a copied history) in one transaction,
    /// all or none, sent in chunks of pipelined statements.
    private func runCopy(_ write: PlannedWrite, on connection: PostgresConnection) -> Result<Void, any Error> {
        // Other instances hear of a copy as of one commit, its last event, as this instance's
        // own readers do (a new session announced once, not once per copied event).
        let statements = write.steps.map(Self.statement(for:)) + notifications(for: Array(write.mutations.suffix(1)))
        do {
            try connection.query("BEGIN")
            var start = 0
            while start < statements.count {
                let end = min(start + Self.copyChunkSize, statements.count)
                _ = try PostgresConnection.rows(of: try connection.pipeline(Array(statements[start..<end])))
                start = end
            }
            try connection.query("COMMIT")
            return .success(())
        } catch {
            _ = try? connection.query("ROLLBACK")
            return .failure(error)
        }
    }

    /// One transaction over single-mutation writes, sent as one pipeline. When a mutation fails,
    /// the transaction is rolled back and sent again without it; every result is final.
    private func runBatch(_ writes: [PlannedWrite], cleanup: WriteStep?, on connection: PostgresConnection)
        -> [Result<Void, any Error>]
    {
        guard !writes.isEmpty else { return [] }
        typealias Statement = PostgresConnection.Statement
        var results = [Result<Void, any Error>?](repeating: nil, count: writes.count)
        var remaining = Array(writes.indices)
        let prepared = writes.map { $0.steps.map(Self.statement(for:)) }
        var cleanup = cleanup.map(Self.statement(for:))
        while !remaining.isEmpty {
            var pipeline = [Statement("BEGIN")]
            var owners: [Int?] = [nil]
            for index in remaining {
                for statement in prepared[index] {
                    pipeline.append(statement)
                    owners.append(index)
                }
            }
            for statement in notifications(for: remaining.flatMap { writes[$0].mutations }) {
                pipeline.append(statement)
                owners.append(nil)
            }
            let cleanupPosition = pipeline.count
            if let cleanup {
                pipeline.append(cleanup)
                owners.append(nil)
            }
            pipeline.append(Statement("COMMIT"))
            owners.append(nil)
            let outcomes: [PostgresConnection.Outcome]
            do {
                outcomes = try connection.pipeline(pipeline)
            } catch {
                // The connection went away mid-transaction: whether it committed is unknown.
                for index in remaining { results[index] = .failure(error) }
                break
            }
            guard let failed = outcomes.indices.first(where: { if case .failed = outcomes[$0] { true } else { false } })
            else {
                for index in remaining { results[index] = .success(()) }
                break
            }
            guard case .failed(let error) = outcomes[failed] else { break }
            _ = try? connection.query("ROLLBACK")
            if cleanup != nil, failed == cleanupPosition {
                cleanup = nil  // removing expired records must not fail the batch: skip it this time
            } else if let owner = owners[failed] {
                results[owner] = .failure(error)
                remaining.removeAll { $0 == owner }
            } else {
                // BEGIN, a notification (its queue full), the clean-up or COMMIT failed: nothing was kept.
                for index in remaining { results[index] = .failure(error) }
                break
            }
        }
        return results.map { $0 ?? .failure(StoreError(code: .failed, message: "the mutation was not run")) }
    }

    /// A step as a statement of the pipeline, with its check made on the server: a statement
    /// that must change one row counts them in the same statement
    /// (`navigation_values_expect_one_row`), and the version check locks the session's row and
    /// compares (`navigation_values_expect_version`, or `navigation_values_expect_log_version`
    /// with the version its log reaches): a pipeline cannot look at an answer before it sends the
    /// next statement.
    static func statement(for step: WriteStep) -> PostgresConnection.Statement {
        let parameters = step.arguments.map(\.postgresText)
        switch step.check {
        case .none:
            return .init(step.sql, parameters)
        case .changesOneRow(let message):
            return .init(
                """
                WITH changed AS (\(step.sql) RETURNING 1)
                SELECT navigation_values_expect_one_row((SELECT count(*) FROM changed), $\(parameters.count + 1))
                """, parameters + [message])
        case .version(let id, let expected):
            return .init("SELECT navigation_values_expect_version($1, $2)", [id.rawValue, "\(expected)"])
        case .logVersion(let id, let expected):
            return .init("SELECT navigation_values_expect_log_version($1, $2)", [id.rawValue, "\(expected)"])
        }
    }

    /// The notifications of a batch's mutations: one line `INSTANCE SESSION SEQ` per mutation
    /// (plus ` JSON`, the event, for a purge, whose event is not stored), as few notifications as
    /// fit PostgreSQL's 8000-byte payload. Delivered to every listening instance when (and only
    /// if) the transaction commits, in commit order (https://www.postgresql.org/docs/current/sql-notify.html).
    func notifications(for mutations: [StoredMutation]) -> [PostgresConnection.Statement] {
        var statements: [PostgresConnection.Statement] = []
        var payload = ""
        func flush() {
            if !payload.isEmpty { statements.append(.init("SELECT pg_notify($1, $2)", [Self.channel, payload])) }
            payload = ""
        }
        for mutation in mutations {
            var line = "\(instance) \(mutation.session.rawValue) \(mutation.event.seq)"
            if mutation.purgesItsSession { line += " " + mutation.event.json }
            if payload.utf8.count + line.utf8.count + 1 > 7_900 { flush() }
            payload += payload.isEmpty ? line : "\n" + line
        }
        flush()
        return statements
    }
}

// MARK: - The store's names

extension SQLSessionStore where Driver == PostgresDriver {
    /// Connects, checks the server (PostgreSQL 14 or newer, for pipeline mode) and applies
    /// pending migrations. Blocks while it does: call it at start-up, or use ``open(url:configuration:)``.
    ///
    /// - Throws: ``StoreError``: `.unavailable` when the server cannot be reached,
    ///   `.migrationRefused` when the database's schema does not match this binary.
    public convenience init(url: String, configuration: Configuration = Configuration()) throws {
        self.init(driver: try PostgresDriver(url: url, configuration: configuration))
    }

    /// Opens the store like ``init(url:configuration:)``, on a thread of its own rather than the
    /// caller's, for callers in async code.
    public static func open(url: String, configuration: Configuration = Configuration()) async throws
        -> PostgresSessionStore
    {
        try await opening { try PostgresDriver(url: url, configuration: configuration) }
    }

    /// Whether `text` names a PostgreSQL database (`postgres://` or `postgresql://`) rather than
    /// a SQLite file.
    public static func isDatabaseURL(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://")
    }

    /// The URL with any password replaced by `***`, for logs and messages.
    public static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url) else { return "postgres://…" }
        if components.password != nil { components.password = "***" }
        if let items = components.queryItems {
            components.queryItems = items.map {
                $0.name == "password" ? URLQueryItem(name: "password", value: "***") : $0
            }
        }
        return components.string ?? "postgres://…"
    }

    /// Retention's query (state $1, before $2 in milliseconds, limit $3), as this store runs it.
    package static var sessionsByStateAndAge: String { SQLText(PostgresDialect()).sessionsByStateAndAge }

    /// The listening connection, nil when the store does not listen (tests).
    var listener: PostgresListener? { driver.listener }

    /// Drops every connection as if the server had gone away, so the next calls reconnect (tests).
    func dropConnections() async { await driver.dropConnections() }
}

// MARK: - SQL

/// What PostgreSQL's SQL says its own way.
struct PostgresDialect: SQLDialect {
    func parameter(_ index: Int) -> String { "$\(index)" }
    /// Times are timestamptz, to the millisecond (Migrations/postgres/0001).
    func time(_ parameter: String) -> String { "to_timestamp(\(parameter)::bigint / 1000.0)" }
    func milliseconds(_ column: String) -> String { "(extract(epoch FROM \(column)) * 1000)::bigint" }
    /// Rounded down to the minute in UTC (Migrations/postgres/0006).
    func minute(_ time: String) -> String { "date_trunc('minute', \(time) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'" }
    func byteLength(_ column: String) -> String { "octet_length(\(column)::text)" }
    func isIn(_ column: String, list parameter: String) -> String { "\(column) = ANY(\(parameter)::text[])" }
    /// A text array literal, each element double-quoted.
    func list(_ texts: [String]) -> DatabaseValue {
        let quoted = texts.map { text in
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        return .text("{" + quoted.joined(separator: ",") + "}")
    }
    func isSame(_ left: String, _ right: String) -> String { "\(left) IS NOT DISTINCT FROM \(right)" }
    /// Writers of several instances meet on the session's row.
    var lockingRead: String { " FOR UPDATE" }
    /// A transaction-scoped advisory lock on the key's hash.
    var transactionLock: String? { "SELECT pg_advisory_xact_lock(hashtext(?1))" }
    /// `lock_timeout` for the rest of the transaction.
    var lockTimeout: String? { "SELECT set_config('lock_timeout', ?1, true)" }
    /// PostgreSQL compares the values of indexed columns to decide whether an update is HOT.
    var rewritesIndexOnAssignment: Bool { false }
    /// `synchronous_commit` off until the transaction ends: a later durable commit flushes it.
    var unsyncedCommit: String? { "SELECT set_config('synchronous_commit', 'off', true)" }
}

extension DatabaseValue {
    /// The value as a text parameter: integers and reals in decimal, bytes as `bytea`'s hex form
    /// (https://www.postgresql.org/docs/current/datatype-binary.html), NULL as nil.
    var postgresText: String? {
        switch self {
        case .null: return nil
        case .integer(let integer): return "\(integer)"
        case .real(let real): return "\(real)"
        case .text(let text): return text
        case .blob(let data):
            let digits = Array("0123456789abcdef".utf8)
            var text: [UInt8] = Array("\\x".utf8)
            text.reserveCapacity(2 + data.count * 2)
            for byte in data {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0f)])
            }
            return String(decoding: text, as: UTF8.self)
        }
    }
}

extension PostgresConnection: SQLConnection {
    @discardableResult
    public func execute(_ sql: String, _ arguments: [DatabaseValue]) throws -> Int {
        try query(sql, arguments.map(\.postgresText)).affectedRows
    }

    public func scan(_ sql: String, _ arguments: [DatabaseValue], _ body: (PostgresRow) throws -> Bool) throws {
        for columns in try query(sql, arguments.map(\.postgresText)).rows {
            guard try body(PostgresRow(columns: columns)) else { return }
        }
    }

    /// One round trip, one snapshot: every query reads the same committed state (in a
    /// repeatable-read transaction of their own; in the open one, where a turn holds the row of
    /// what they read).
    public func readAll(_ queries: [SQLQuery], _ body: (Int, PostgresRow) throws -> Void) throws {
        let inTransaction = isInTransaction
        let statements = queries.map { Statement($0.sql, $0.arguments.map(\.postgresText)) }
        let results: [[[String?]]]
        if inTransaction {
            results = try Self.rows(of: try pipeline(statements))
        } else {
            do {
                results = Array(
                    try Self.rows(
                        of: try pipeline(
                            [Statement("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")] + statements
                                + [Statement("COMMIT")])
                    ).dropFirst().prefix(queries.count))
            } catch {
                _ = try? query("ROLLBACK")  // leave no failed transaction open on the reader
                throw error
            }
        }
        for (index, rows) in results.enumerated() {
            for columns in rows { try body(index, PostgresRow(columns: columns)) }
        }
    }

    /// BEGIN and the queries in one pipeline: one round trip, however long the first waits.
    public func begin(_ queries: [SQLQuery], _ body: (Int, PostgresRow) throws -> Void) throws {
        let statements = [Statement("BEGIN")] + queries.map { Statement($0.sql, $0.arguments.map(\.postgresText)) }
        let results: [[[String?]]]
        do {
            results = Array(try Self.rows(of: try pipeline(statements)).dropFirst())
        } catch {
            _ = try? query("ROLLBACK")
            throw error
        }
        for (index, rows) in results.enumerated() {
            for columns in rows { try body(index, PostgresRow(columns: columns)) }
        }
    }

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try query("BEGIN")
        do {
            let result = try body()
            try query("COMMIT")
            return result
        } catch {
            _ = try? query("ROLLBACK")  // leave no failed transaction open on the writer
            throw error
        }
    }

    public func checkWritable() throws {
        let row = try query("SELECT pg_is_in_recovery(), current_setting('transaction_read_only')").rows.first
        guard let row, row.count == 2, row[0] == "f", row[1] == "off" else {
            throw StoreError(code: .unavailable, message: "the database is read-only (a standby, or read-only mode)")
        }
    }

    /// The rows of every statement, or the first failure.
    static func rows(of outcomes: [Outcome]) throws -> [[[String?]]] {
        try outcomes.map { outcome in
            switch outcome {
            case .rows(let rows): return rows.rows
            case .failed(let error): throw error
            case .skipped: throw StoreError(code: .failed, message: "a statement of the pipeline did not run")
            }
        }
    }
}

/// A row of a PostgreSQL answer: its columns as text (nil: NULL).
public struct PostgresRow: SQLRow {
    let columns: [String?]

    private static func corrupt(_ what: String) -> StoreError {
        StoreError(code: .corrupt, message: "a stored row does not read back: \(what)")
    }

    public func string(_ column: Int) throws -> String {
        guard column < columns.count, let text = columns[column] else {
            throw Self.corrupt("column \(column) is missing")
        }
        return text
    }

    public func isNull(_ column: Int) throws -> Bool {
        guard column < columns.count else { throw Self.corrupt("column \(column) is missing") }
        return columns[column] == nil
    }

    public func int64(_ column: Int) throws -> Int64 {
        guard let value = Int64(try string(column)) else { throw Self.corrupt("column \(column) is not an integer") }
        return value
    }

    public func bool(_ column: Int) throws -> Bool {
        switch try string(column) {
        case "t": return true
        case "f": return false
        default: throw Self.corrupt("column \(column) is not a boolean")
        }
    }

    /// Bytes from `bytea`'s hex text form (`\x0a1b…`).
    public func data(_ column: Int) throws -> Data {
        let utf8 = Array(try string(column).utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else {
            throw Self.corrupt("a bytea value is not in hex form")
        }
        func nibble(_ byte: UInt8) throws -> UInt8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
            default: throw Self.corrupt("a bytea value has a character that is not hex")
            }
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity((utf8.count - 2) / 2)
        var index = 2
        while index < utf8.count {
            bytes.append(try nibble(utf8[index]) << 4 | nibble(utf8[index + 1]))
            index += 2
        }
        return Data(bytes)
    }
}
