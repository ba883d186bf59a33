import CLibPQ
import Foundation
import NavigationValuesStore

#if canImport(Glibc)
    import Glibc
#endif

/// One libpq connection, with its prepared statements, used from one thread at a time.
///
/// Every statement goes through the extended query protocol in pipeline mode
/// (https://www.postgresql.org/docs/current/libpq-pipeline-mode.html): a statement is prepared
/// once per connection (its `Parse` pipelined in front of its first use), and a list of
/// statements is sent at once and answered in one round trip. The socket is non-blocking and
/// polled with a timeout, so a server that stops answering fails the call (`.unavailable`)
/// instead of hanging the store's thread.
///
/// Not Sendable: the driver's serial queues and its listener thread each own theirs.
public final class PostgresConnection {
    /// One statement of a pipeline: SQL with `$1…` parameters and their text values (nil: NULL).
    struct Statement {
        var sql: String
        var parameters: [String?]

        init(_ sql: String, _ parameters: [String?] = []) {
            self.sql = sql
            self.parameters = parameters
        }
    }

    /// What one statement answered: its rows as text (nil: NULL), or its error.
    enum Outcome {
        case rows(PostgresRows)
        case failed(StoreError)
        /// An earlier statement of the pipeline failed, so this one did not run.
        case skipped
    }

    private let handle: OpaquePointer
    /// Set when a round trip was cut short (a timeout): what the server sends next is unknown.
    private var isBroken = false
    /// Prepared statement names by SQL.
    private var prepared: [String: String] = [:]
    /// How long one round trip may take before the connection counts as lost.
    let timeout: Duration

    /// Connects with a libpq connection string or `postgres://` URL (TLS, passwords and the
    /// `PG*` variables as libpq takes them: https://www.postgresql.org/docs/current/libpq-connect.html).
    /// `connect_timeout` defaults to 5 s and `application_name` to `navigation-values`; the URL
    /// may set either.
    ///
    /// - Throws: ``StoreError`` `.unavailable` when the server cannot be reached or refuses.
    init(url: String, timeout: Duration = .seconds(30)) throws {
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = ["5", "navigation-values", url]
        let connection = withCStrings(keywords) { keywordPointers in
            withCStrings(values) { valuePointers in
                PQconnectdbParams(keywordPointers, valuePointers, 1)
            }
        }
        guard let connection else {
            throw StoreError(code: .unavailable, message: "cannot allocate a PostgreSQL connection")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.message(of: connection)
            PQfinish(connection)
            throw StoreError(code: .unavailable, message: "cannot connect to PostgreSQL: \(message)")
        }
        handle = connection
        self.timeout = timeout
        guard PQsetnonblocking(connection, 1) == 0, PQenterPipelineMode(connection) == 1 else {
            // Every stored property is set, so deinit runs and finishes the connection: finishing
            // it here too would free it twice.
            let message = Self.message(of: connection)
            throw StoreError(code: .unavailable, message: "cannot set up the PostgreSQL connection: \(message)")
        }
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether the connection is still usable (false once the server went away).
    var isUsable: Bool { !isBroken && PQstatus(handle) == CONNECTION_OK }

    /// Whether a transaction is open on the connection, as of its last answer.
    var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR
    }

    /// The server's major version, such as 15.
    var serverMajorVersion: Int { Int(PQserverVersion(handle)) / 10_000 }

    // MARK: - Running statements

    /// Runs one statement and returns its rows, or throws its error.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> PostgresRows {
        switch try pipeline([Statement(sql, parameters)])[0] {
        case .rows(let rows): return rows
        case .failed(let error): throw error
        case .skipped: throw StoreError(code: .failed, message: "the statement did not run", sql: sql)
        }
    }

    /// Sends every statement at once, then reads every answer: one round trip. A statement
    /// that fails makes the ones after it `.skipped` (the server skips to the end of the
    /// pipeline). Statements outside an explicit transaction each commit on their own.
    ///
    /// - Throws: ``StoreError`` `.unavailable` when the connection is lost or times out; then
    ///   it is unknown which statements ran.
    func pipeline(_ statements: [Statement]) throws -> [Outcome] {
        guard isUsable else { throw lost("the connection to PostgreSQL is closed") }
        var newlyPrepared: [String: String] = [:]
        // Each statement is one pipeline entry; its first use adds its Parse as an entry before it.
        var entries: [(statement: Int, isParse: Bool)] = []
        for (index, statement) in statements.enumerated() {
            let name: String
            if let known = prepared[statement.sql] ?? newlyPrepared[statement.sql] {
                name = known
            } else {
                name = "nv\(prepared.count + newlyPrepared.count + 1)"
                guard PQsendPrepare(handle, name, statement.sql, 0, nil) == 1 else {
                    throw lost("cannot send a statement: \(Self.message(of: handle))", sql: statement.sql)
                }
                newlyPrepared[statement.sql] = name
                entries.append((index, true))
            }
            let sent = withCStrings(statement.parameters) { values in
                PQsendQueryPrepared(handle, name, Int32(statement.parameters.count), values, nil, nil, 0)
            }
            guard sent == 1 else {
                throw lost("cannot send a statement: \(Self.message(of: handle))", sql: statement.sql)
            }
            entries.append((index, false))
        }
        guard PQpipelineSync(handle) == 1 else { throw lost("cannot end the pipeline: \(Self.message(of: handle))") }
        var outcomes = [Outcome](repeating: .skipped, count: statements.count)
        var parsed: Set<String> = []
        try readAnswers(entries.count) { position, result in
            let (index, isParse) = entries[position]
            let sql = statements[index].sql
            switch PQresultStatus(result) {
            case PGRES_COMMAND_OK, PGRES_TUPLES_OK:
                if isParse {
                    parsed.insert(sql)
                } else {
                    outcomes[index] = .rows(PostgresRows(result))
                }
            case PGRES_PIPELINE_ABORTED:
                break  // stays .skipped, unless its Parse already failed it
            default:
                outcomes[index] = .failed(Self.error(of: result, sql: sql))
            }
        }
        // Only statements whose Parse succeeded exist on the server.
        for (sql, name) in newlyPrepared where parsed.contains(sql) { prepared[sql] = name }
        return outcomes
    }

    /// Reads the answers of `count` pipeline entries and the sync that ends them, calling
    /// `body` with each entry's first result.
    private func readAnswers(_ count: Int, _ body: (Int, OpaquePointer) -> Void) throws {
        var entry = 0
        var hasResult = false
        let deadline = ContinuousClock.now + timeout
        while true {
            let flushed = PQflush(handle)
            guard flushed >= 0 else { throw lost("cannot send to PostgreSQL: \(Self.message(of: handle))") }
            guard PQconsumeInput(handle) == 1 else {
                throw lost("the connection to PostgreSQL was lost: \(Self.message(of: handle))")
            }
            reading: while PQisBusy(handle) == 0 {
                guard let result = PQgetResult(handle) else {
                    // The end of one entry's results; a NULL with none before it means "nothing yet".
                    guard hasResult else { break reading }
                    entry += 1
                    hasResult = false
                    continue
                }
                defer { PQclear(result) }
                if PQresultStatus(result) == PGRES_PIPELINE_SYNC {
                    guard entry >= count else {
                        throw lost("PostgreSQL ended the pipeline after \(entry) of \(count) answers")
                    }
                    return
                }
                if !hasResult, entry < count { body(entry, result) }
                hasResult = true
            }
            if !isUsable { throw lost("the connection to PostgreSQL was lost: \(Self.message(of: handle))") }
            try wait(forWriting: flushed == 1, until: deadline)
        }
    }

    /// Waits until the socket can be read (or written, when output is pending).
    private func wait(forWriting: Bool, until deadline: ContinuousClock.Instant) throws {
        let socket = PQsocket(handle)
        guard socket >= 0 else { throw lost("the connection to PostgreSQL has no socket") }
        while true {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else {
                throw lost("PostgreSQL did not answer within \(timeout)")
            }
            var descriptor = pollfd(
                fd: socket, events: Int16(POLLIN) | (forWriting ? Int16(POLLOUT) : 0), revents: 0)
            let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + 1)
            let ready = poll(&descriptor, 1, min(milliseconds, 1_000))
            if ready < 0, errno == EINTR { continue }
            guard ready >= 0 else { throw lost("poll failed: errno \(errno)") }
            if ready > 0 { return }
        }
    }

    /// Runs a script of several statements through the simple query protocol, outside
    /// pipeline mode (a migration: https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-MULTI-STATEMENT),
    /// and returns the last statement's rows. Blocks until it is done: for start-up only.
    @discardableResult
    func executeScript(_ sql: String) throws -> PostgresRows {
        guard isUsable else { throw lost("the connection to PostgreSQL is closed") }
        guard PQexitPipelineMode(handle) == 1 else {
            throw lost("cannot leave pipeline mode: \(Self.message(of: handle))", sql: sql)
        }
        defer { PQenterPipelineMode(handle) }
        guard let result = PQexec(handle, sql) else {
            throw lost("the connection to PostgreSQL was lost: \(Self.message(of: handle))", sql: sql)
        }
        defer { PQclear(result) }
        // PQexec keeps only the last result; drain anything a multi-statement script left.
        while let extra = PQgetResult(handle) { PQclear(extra) }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK: return PostgresRows(result)
        default: throw Self.error(of: result, sql: sql)
        }
    }

    // MARK: - Notifications

    /// Reads what has arrived on the socket and returns the notifications it carried
    /// (`LISTEN`, https://www.postgresql.org/docs/current/libpq-notify.html), waiting up to
    /// `wait` for the first.
    func notifications(waitingUpTo wait: Duration) throws -> [(channel: String, payload: String)] {
        guard isUsable else { throw lost("the connection to PostgreSQL is closed") }
        var found = drainNotifications()
        if found.isEmpty {
            let socket = PQsocket(handle)
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                clamping: wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready < 0, errno != EINTR { throw lost("poll failed: errno \(errno)") }
        }
        guard PQconsumeInput(handle) == 1 else {
            throw lost("the connection to PostgreSQL was lost: \(Self.message(of: handle))")
        }
        found += drainNotifications()
        return found
    }

    private func drainNotifications() -> [(channel: String, payload: String)] {
        var found: [(channel: String, payload: String)] = []
        while let notice = PQnotifies(handle) {
            found.append((String(cString: notice.pointee.relname), String(cString: notice.pointee.extra)))
            PQfreemem(notice)
        }
        return found
    }

    // MARK: - Errors

    private func lost(_ message: String, sql: String? = nil) -> StoreError {
        isBroken = true
        return StoreError(code: .unavailable, message: message, sql: sql)
    }

    private static func message(of connection: OpaquePointer) -> String {
        guard let text = PQerrorMessage(connection) else { return "unknown error" }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The error a failed result carries: its SQLSTATE classified, its primary message, the SQL.
    static func error(of result: OpaquePointer, sql: String?) -> StoreError {
        let state = PQresultErrorField(result, CLIBPQ_DIAG_SQLSTATE).map { String(cString: $0) }
        let primary = PQresultErrorField(result, CLIBPQ_DIAG_MESSAGE_PRIMARY).map { String(cString: $0) }
        let message = primary ?? PQresultErrorMessage(result).map { String(cString: $0) } ?? "PostgreSQL error"
        return StoreError(sqlState: state ?? "", message: message, sql: sql)
    }
}

@available(*, unavailable)
extension PostgresConnection: Sendable {}

/// The rows a statement returned, copied out of libpq's result as text.
struct PostgresRows {
    /// Each row's columns: text, or nil for NULL.
    var rows: [[String?]]
    /// Rows an INSERT, UPDATE or DELETE touched.
    var affectedRows: Int

    init(_ result: OpaquePointer) {
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        var rows: [[String?]] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var columns: [String?] = []
            columns.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                if PQgetisnull(result, row, column) == 1 {
                    columns.append(nil)
                } else {
                    columns.append(String(cString: PQgetvalue(result, row, column)))
                }
            }
            rows.append(columns)
        }
        self.rows = rows
        affectedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
    }
}

/// Calls `body` with a NULL-terminated-free array of C strings for `strings` (nil entries stay
/// NULL), valid only during the call.
private func withCStrings<T>(_ strings: [String?], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.flatMap { strdup($0) } }
    defer { for copy in copies { free(copy) } }
    return body(copies.map { $0.map { UnsafePointer($0) } })
}

private func withCStrings<T>(_ strings: [String], _ body: ([UnsafePointer<CChar>?]) -> T) -> T {
    withCStrings(strings.map { Optional($0) }) { pointers in body(pointers + [nil]) }
}
