// floor-server: the floor under any redesign of the durable write path, measured on
// this repository's own HTTP stack. Not the product, and never shipped: a bench fixture that
// `scripts/bench-table.sh --floor` runs beside redis-server (appendfsync always) and the real server.
//
//     swift run --package-path Benchmarks -c release floor-server --sessions 1000 --sessions-file F
//         [--log PATH] [--port 0] [--sync full|off] [--log-store file|sqlite|sqlite-rowid]
//         [--checkpoint-pages 1000]
//
// It answers the push and pop requests of scripts/bench-table/pushpop.lua as cheaply as a
// server built on `HTTPServer` could while still keeping the contract that matters for the
// comparison, a 2xx only once the change is on disk:
// - the request goes through the same event loops, parser, router and worker threads as the
//   product's (no middleware: no request log, metrics, request ids or CORS headers);
// - the body is parsed with the core's own JSON parser, the bearer token compared with the
//   session's, and the change applied to an in-memory stack of screen names under a lock;
// - the change is queued under the session's lock, and the handler waits for the group commit
//   that wrote it (one per group, on a thread of its own, the way Redis's appendfsync always
//   shares one fsync among the clients of a loop turn). With `--log-store file` (the default,
//   the table's floor) the group is appended to one log file as JSON lines, `write` then
//   `fdatasync`; with `sqlite` it is one transaction on a new SQLite file (WAL,
//   synchronous=FULL, the product's `events` table, unique index and log-version check, and
//   SQLite's automatic checkpoint every `--checkpoint-pages` frames: SQLiteLogStore.swift), to
//   see what SQLite as the synced log costs by itself; `sqlite-rowid` appends the rows by rowid
//   alone (no per-session index, so no version check);
// - the answer is a small JSON object with the session's new version and depth.
// What it leaves out, a real log-first store would still need: validation against the schema,
// values and preferences, events and their fan-out to subscribers, idempotency, limits, the
// state rows or snapshots written in the background, and recovery. So its figure is an upper
// bound for that design, not a forecast.
import BenchmarkSupport
import Foundation
import HTTPServer
import NavigationValues
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One change as the log keeps it: its session, the version it made, its event's type, and the
/// bytes the store writes (a JSON line in the file; the event's JSON in the SQLite row).
struct LogEntry: Sendable {
    var session: String
    var version: Int64
    var type: String
    var bytes: [UInt8]
}

/// Where the group commits write: ``commit(_:)`` runs on the log's thread alone, one group at a
/// time, and returns once the group is durable (or why it is not).
protocol LogStore: Sendable {
    /// What a change is logged as; runs on the request's thread.
    func entry(session: String, version: Int64, pushed: (name: String, values: JSONValue?)?, depth: Int) -> LogEntry
    func commit(_ entries: [LogEntry]) -> BenchError?
}

/// The log and the thread that commits it in groups.
final class GroupLog: Sendable {
    private struct Pending {
        var entries: [LogEntry] = []
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    let store: any LogStore
    private let pending = Mutex(Pending())
    private let ready = DispatchSemaphore(value: 0)
    private let groups = Atomic<Int>(0)

    /// Entries are committed to `store` in groups by a thread this starts.
    init(store: any LogStore) {
        self.store = store
        let thread = Thread { [self] in run() }
        thread.start()
    }

    /// Groups committed so far.
    var groupCount: Int { groups.load(ordering: .relaxed) }

    /// Queues `entry`; `waiter` resumes once it is committed. Called under the session's lock,
    /// so that a session's entries reach the store in the order of its versions.
    func enqueue(_ entry: LogEntry, _ waiter: CheckedContinuation<Void, any Error>) {
        let wasIdle = pending.withLock { pending -> Bool in
            let wasIdle = pending.waiters.isEmpty
            pending.entries.append(entry)
            pending.waiters.append(waiter)
            return wasIdle
        }
        if wasIdle { ready.signal() }
    }

    private func run() {
        // Named, so that its CPU can be read apart (/proc/PID/task/*/comm).
        nameCurrentThread("group-log")
        while true {
            ready.wait()
            let group = pending.withLock { pending -> Pending in
                defer { pending = Pending() }
                return pending
            }
            if group.waiters.isEmpty { continue }
            let failure = store.commit(group.entries)
            groups.add(1, ordering: .relaxed)
            for waiter in group.waiters {
                if let failure { waiter.resume(throwing: failure) } else { waiter.resume() }
            }
        }
    }
}

/// The flat log: each change a JSON line, a group one `write` and one `fdatasync` (the way
/// Redis's appendfsync always shares one fsync among the clients of a loop turn).
final class FileLogStore: LogStore, @unchecked Sendable {
    private let descriptor: Int32
    private let syncs: Bool
    /// The group's bytes; touched by the log's thread alone.
    private var buffer: [UInt8] = []

    /// `syncs` false leaves out the `fdatasync` (to see what the rest costs, never to compare
    /// with a durable anchor).
    init(path: String, syncs: Bool) throws {
        self.syncs = syncs
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BenchError.system("open(\(path))") }
    }

    func entry(session: String, version: Int64, pushed: (name: String, values: JSONValue?)?, depth: Int) -> LogEntry {
        let operation = pushed == nil ? "pop" : "push"
        var record: [UInt8] = []
        record.reserveCapacity(96)
        record.append(contentsOf: #"{"session":"#.utf8)
        JSONValue.writeString(session, to: &record)
        record.append(contentsOf: #","version":\#(version),"op":"\#(operation)","depth":\#(depth)}"#.utf8)
        record.append(0x0A)
        return LogEntry(session: session, version: version, type: operation, bytes: record)
    }

    func commit(_ entries: [LogEntry]) -> BenchError? {
        buffer.removeAll(keepingCapacity: true)
        for entry in entries { buffer.append(contentsOf: entry.bytes) }
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { bytes in
                write(descriptor, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                return .system("write")
            }
            offset += written
        }
        guard syncs else { return nil }
        return fdatasync(descriptor) == 0 ? nil : .system("fdatasync")
    }
}

/// A session as this fixture keeps it: its token, version and the names on its stack.
struct FloorSession {
    var token: String
    var version: Int64 = 1
    var screens: [String] = ["Home"]
}

/// Sessions in 16 shards, each behind its own lock.
final class FloorSessions: Sendable {
    private final class Shard: Sendable {
        let sessions = Mutex<[String: FloorSession]>([:])
    }

    private let shards: [Shard] = (0..<16).map { _ in Shard() }

    private func shard(_ id: String) -> Shard {
        var hasher = Hasher()
        hasher.combine(id)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
    }

    func insert(_ id: String, _ session: FloorSession) {
        shard(id).sessions.withLock { $0[id] = session }
    }

    enum Outcome {
        case changed(version: Int64, depth: Int)
        case notFound
        case unauthorized
        case conflict(String)
    }

    /// Applies `change` to the session `id` when `token` is its token, then calls `changed` with
    /// the new version and depth, still under the session's lock.
    func change(
        _ id: String, token: Substring, _ change: (inout FloorSession) -> String?,
        changed: (_ version: Int64, _ depth: Int) -> Void
    ) -> Outcome {
        shard(id).sessions.withLock { sessions -> Outcome in
            guard var session = sessions[id] else { return .notFound }
            guard session.token.utf8.elementsEqual(token.utf8) else { return .unauthorized }
            if let problem = change(&session) { return .conflict(problem) }
            session.version += 1
            sessions[id] = session
            changed(session.version, session.screens.count)
            return .changed(version: session.version, depth: session.screens.count)
        }
    }
}

struct FloorError: Error {
    var status: HTTPStatus
    var detail: String
}

/// Applies `change` to the session `id` and answers once its log entry is committed. The entry is
/// queued under the session's lock, so a session's entries reach the log in the order of its
/// versions (the SQLite log checks each against the one before).
func mutate(
    _ id: String, _ request: Request, pushed: (name: String, values: JSONValue?)?,
    _ change: (inout FloorSession) -> String?
) async throws -> Response {
    var outcome = FloorSessions.Outcome.notFound
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        outcome = sessions.change(id, token: bearer(request), change) { version, depth in
            log.enqueue(log.store.entry(session: id, version: version, pushed: pushed, depth: depth), continuation)
        }
        if case .changed = outcome { return }
        continuation.resume()
    }
    switch outcome {
    case .notFound: throw FloorError(status: .notFound, detail: "no session \(id)")
    case .unauthorized: throw FloorError(status: .unauthorized, detail: "wrong token")
    case .conflict(let detail): throw FloorError(status: .conflict, detail: detail)
    case .changed(let version, let depth):
        var body: [UInt8] = []
        body.reserveCapacity(48)
        body.append(contentsOf: #"{"version":\#(version),"depth":\#(depth)}"#.utf8)
        return Response(status: .ok, headers: ["Content-Type": "application/json"], body: body)
    }
}

func bearer(_ request: Request) -> Substring {
    guard let value = request.headers["authorization"], value.hasPrefix("Bearer ") else { return "" }
    return value.dropFirst(7)
}

func jsonObject(_ request: Request) throws -> [String: JSONValue] {
    guard case .object(let members) = try JSONValue(parsing: request.body) else {
        throw FloorError(status: .badRequest, detail: "the body must be a JSON object")
    }
    return members
}

// MARK: - Main

var arguments = CommandLine.arguments.dropFirst()
var sessionCount = 1000
var sessionsFile = "floor-sessions.txt"
var logPath = "floor.log"
var port = 0
var syncs = true
var logStore = "file"
var checkpointPages = 1_000
while let argument = arguments.popFirst() {
    let value = arguments.popFirst() ?? ""
    switch argument {
    case "--sessions": sessionCount = Int(value) ?? sessionCount
    case "--sessions-file": sessionsFile = value
    case "--log": logPath = value
    case "--port": port = Int(value) ?? 0
    case "--sync":
        guard value == "full" || value == "off" else {
            FileHandle.standardError.write(Data("--sync is full or off\n".utf8))
            exit(2)
        }
        syncs = value == "full"
    case "--log-store":
        guard value == "file" || SQLiteLogStore.Shape(rawValue: value) != nil else {
            FileHandle.standardError.write(Data("--log-store is file, sqlite or sqlite-rowid\n".utf8))
            exit(2)
        }
        logStore = value
    case "--checkpoint-pages":
        guard let pages = Int(value), pages >= 0 else {
            FileHandle.standardError.write(Data("--checkpoint-pages is a count of pages\n".utf8))
            exit(2)
        }
        checkpointPages = pages
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
        exit(2)
    }
}

let sessions = FloorSessions()
let initialVersion: Int64 = 1
var ids: [String] = []
var lines = ""
for index in 0..<sessionCount {
    let id = "s_floor\(index)"
    let token = "t_\(UInt64.random(in: 0...UInt64.max))"
    // Five screens above the root, as bench-table's sessions have, so that a pop that
    // overtakes its push still finds a screen.
    sessions.insert(
        id, FloorSession(token: token, version: initialVersion, screens: ["Home"] + (0..<5).map { "List\($0)" }))
    ids.append(id)
    lines += "\(id) \(token)\n"
}
let sqliteStore: SQLiteLogStore?
let log: GroupLog
do {
    if let shape = SQLiteLogStore.Shape(rawValue: logStore) {
        guard syncs else { throw BenchError("--sync off is for the file log alone") }
        let store = try SQLiteLogStore(
            path: logPath, shape: shape, checkpointPages: checkpointPages, sessions: ids, version: initialVersion)
        sqliteStore = store
        log = GroupLog(store: store)
    } else {
        sqliteStore = nil
        log = GroupLog(store: try FileLogStore(path: logPath, syncs: syncs))
    }
} catch {
    FileHandle.standardError.write(Data("floor-server: \(error)\n".utf8))
    exit(1)
}
try lines.write(toFile: sessionsFile, atomically: true, encoding: .utf8)

let router = Router()
router.post("/v1/sessions/{id}/push") { request async throws -> Response in
    let id = request.parameters["id"] ?? ""
    let members = try jsonObject(request)
    guard case .string(let name)? = members["name"], !name.isEmpty else {
        throw FloorError(status: .badRequest, detail: "name must be a non-empty string")
    }
    return try await mutate(id, request, pushed: (name, members["values"])) { session in
        guard session.screens.count < 1_000 else { return "the stack is full" }
        session.screens.append(name)
        return nil
    }
}
router.post("/v1/sessions/{id}/pop") { request async throws -> Response in
    let id = request.parameters["id"] ?? ""
    let members = try jsonObject(request)
    var count = 1
    if let value = members["count"] {
        guard case .integer(let given) = value, given >= 1 else {
            throw FloorError(status: .badRequest, detail: "count must be a positive integer")
        }
        count = Int(clamping: given)
    }
    return try await mutate(id, request, pushed: nil) { session in
        guard session.screens.count > count else { return "only \(session.screens.count - 1) screens to pop" }
        session.screens.removeLast(count)
        return nil
    }
}
router.get("/healthz") { _ in Response(status: .ok, headers: ["Content-Type": "application/json"], body: Array(#"{"status":"ok"}"#.utf8)) }

let server = HTTPServer(
    configuration: HTTPServer.Configuration(port: port),
    responder: router.buildResponder(),
    errorResponder: { error, _ in
        let (status, detail) =
            if let error = error as? FloorError {
                (error.status, error.detail)
            } else if let error = error as? BenchError {
                (HTTPStatus.internalServerError, error.description)  // the log's commit failed
            } else {
                (HTTPStatus.badRequest, String(describing: error))
            }
        var body: [UInt8] = Array(#"{"detail":"#.utf8)
        JSONValue.writeString(detail, to: &body)
        body.append(0x7D)
        return Response(status: status, headers: ["Content-Type": "application/problem+json"], body: body)
    })
try await server.start()
FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(server.port)\n".utf8))
server.shutdownOnSignals()
await server.waitUntilStopped()
print("groups committed: \(log.groupCount)")
if let sqliteStore {
    print("changes committed: \(sqliteStore.entriesCommitted), WAL pages written: \(sqliteStore.pagesWritten)")
}
