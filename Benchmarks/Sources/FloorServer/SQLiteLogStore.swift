import BenchmarkSupport
import Foundation
import NavigationValues
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// The log as a SQLite file, to see what SQLite as the synced log costs by itself: each group one
/// `BEGIN IMMEDIATE` transaction of its changes' statements, as the product's writer commits
/// log-first mutations without idempotency keys (no savepoint per change). The connection is the
/// product's own (`NavigationValuesSQLite`'s `Database`: foreign keys on, WAL, `synchronous=FULL`,
/// SQLite's default page size and cache), and
/// `events` has the product's columns, checks, foreign key and unique index
/// (created by the product's own migrations).
///
/// What differs from the product's store: checkpoints are SQLite's automatic ones, inside the commit
/// that crosses `checkpointPages` frames (the product turns those off and checkpoints on a thread of
/// its own, finishing on the writer between batches); the sessions' rows have only the columns a
/// session needs; a failed change fails its whole group; no state rows are written behind the log.
final class SQLiteLogStore: LogStore, @unchecked Sendable {
    /// How `events` is keyed.
    enum Shape: String {
        /// The product's: a rowid table with `UNIQUE (session, seq)`, and each change checked
        /// against the session's latest seq with the product's log-version query.
        case product = "sqlite"
        /// Rows appended by rowid alone: no per-session index, so no version check (the check
        /// needs that index); the foreign key's lookup of the session stays.
        case rowid = "sqlite-rowid"
    }

    /// The product's log-version check (SQLText's `expectLogVersion`): the newest seq of the
    /// session's log past its state's version, else that version.
    private static let logVersion = """
        SELECT coalesce((SELECT max(seq) FROM events
                         WHERE events.session = sessions.id AND events.seq > sessions.version), sessions.version)
        FROM sessions WHERE id = ?1
        """
    private static let insertEvent =
        "INSERT INTO events (session, seq, type, json, at, bytes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"

    /// Used by the log's thread alone once `init` returns.
    private let database: Database
    private let shape: Shape
    /// Pages written before the first group (the schema and the sessions' rows).
    private let basePages: Int
    private let pages = Atomic<Int>(0)
    private let entries = Atomic<Int>(0)

    /// Creates the database at `path` (which must not exist) with a session row for each of
    /// `sessions`, each at `version`.
    init(path: String, shape: Shape, checkpointPages: Int, sessions: [String], version: Int64) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw BenchError("\(path) exists; the SQLite log starts from a new file")
        }
        self.shape = shape
        let database = try Database(path: path)
        try database.enableWriteAheadLog(synchronous: .full)
        // PRAGMA arguments cannot be bound; the value is an integer.
        try database.execute("PRAGMA wal_autocheckpoint = \(max(0, checkpointPages))")
        // The product's schema, by its own migrations; for `rowid`, `events` again without its
        // unique key (its definition read back from the file, that clause left out).
        _ = try Migrator().migrate(database)
        if shape == .rowid {
            let definition = try database.fetchOne(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'events'") { $0.string(0) }
            guard let definition, definition.contains("UNIQUE (session, seq)") else {
                throw BenchError("the events table's definition has no UNIQUE (session, seq) to leave out")
            }
            // A constraint that always holds in the key's place keeps the definition's shape.
            try database.executeScript(
                "DROP TABLE events; " + definition.replacingOccurrences(of: "UNIQUE (session, seq)", with: "CHECK (1)")
                    + ";")
        }
        try database.inTransaction {
            for session in sessions {
                // The token's hash is unique: the session's id stands in for it.
                try database.execute(
                    """
                    INSERT INTO sessions (id, version, state, token_hash, created_at, updated_at)
                    VALUES (?1, ?2, 'active', ?1, 0, 0)
                    """, [.text(session), .integer(version)])
            }
        }
        basePages = database.pagesWritten
        self.database = database
    }

    /// WAL frames written by the groups' commits (checkpoints not counted).
    var pagesWritten: Int { pages.load(ordering: .relaxed) }
    /// Changes committed.
    var entriesCommitted: Int { entries.load(ordering: .relaxed) }

    /// The event's JSON as the product writes it for push and pop (`screen.pushed` with the
    /// screen, `screens.popped` with its id), about as long: the screens' ids are stand-ins.
    func entry(session: String, version: Int64, pushed: (name: String, values: JSONValue?)?, depth: Int) -> LogEntry {
        var json: [UInt8] = []
        json.reserveCapacity(288)
        json.append(contentsOf: #"{"at":""#.utf8)
        json.append(contentsOf: Timestamp.string(from: Date()).utf8)
        if let pushed {
            json.append(contentsOf: #"","screen":{"handlers":{},"id":"#.utf8)
            Self.writeScreenID(session, depth - 1, to: &json)
            json.append(contentsOf: #","index":\#(depth - 1),"name":"#.utf8)
            JSONValue.writeString(pushed.name, to: &json)
            json.append(contentsOf: #","next":null,"preferences":{},"previous":"#.utf8)
            Self.writeScreenID(session, depth - 2, to: &json)
            let values = pushed.values ?? .object([:])
            json.append(contentsOf: #","resolved":"#.utf8)
            values.write(to: &json)
            json.append(contentsOf: #","role":"screen","values":"#.utf8)
            values.write(to: &json)
            json.append(contentsOf: #"},"seq":\#(version),"type":"screen.pushed"}"#.utf8)
            return LogEntry(session: session, version: version, type: "screen.pushed", bytes: json)
        }
        json.append(contentsOf: #"","screens":["#.utf8)
        Self.writeScreenID(session, depth, to: &json)
        json.append(contentsOf: #"],"seq":\#(version),"type":"screens.popped"}"#.utf8)
        return LogEntry(session: session, version: version, type: "screens.popped", bytes: json)
    }

    func commit(_ group: [LogEntry]) -> BenchError? {
        let at = Int64(Date().timeIntervalSince1970 * 1000)
        do {
            try database.inTransaction {
                for entry in group {
                    let session = DatabaseValue.text(entry.session)
                    if shape == .product {
                        let latest = try database.fetchOne(Self.logVersion, [session]) { $0.int64(0) }
                        guard latest == entry.version - 1 else {
                            throw BenchError(
                                "\(entry.session) is at \(latest.map(String.init) ?? "no row"), not \(entry.version - 1)"
                            )
                        }
                    }
                    try database.execute(
                        Self.insertEvent,
                        [
                            session, .integer(entry.version), .text(entry.type),
                            .text(String(decoding: entry.bytes, as: UTF8.self)), .integer(at),
                            .integer(entry.bytes.count),
                        ])
                }
            }
        } catch let error as BenchError {
            return error
        } catch {
            return BenchError("commit: \(error)")
        }
        pages.store(database.pagesWritten - basePages, ordering: .relaxed)
        entries.add(group.count, ordering: .relaxed)
        return nil
    }

    /// A 14-character screen id (the product's are `c_` and 12 characters), from the session and
    /// the screen's index.
    private static func writeScreenID(_ session: String, _ index: Int, to output: inout [UInt8]) {
        var id = Array("c_\(index)_\(session.suffix(10))".utf8.prefix(14))
        while id.count < 14 { id.append(UInt8(ascii: "0")) }
        output.append(0x22)
        output.append(contentsOf: id)
        output.append(0x22)
    }
}
