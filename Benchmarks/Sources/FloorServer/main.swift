// floor-server: the floor under any redesign of the durable write path, measured on
// this repository's own HTTP stack. Not the product, and never shipped: a bench fixture that
// `scripts/bench-table.sh --floor` runs beside redis-server (appendfsync always) and the real server.
//
//     swift run --package-path Benchmarks -c release floor-server --sessions 1000 --sessions-file F
//         [--log PATH] [--port 0] [--sync full|off]
//
// It answers the push and pop requests of scripts/bench-table/pushpop.lua as cheaply as a
// server built on `HTTPServer` could while still keeping the contract that matters for the
// comparison, a 2xx only once the change is on disk:
// - the request goes through the same event loops, parser, router and worker threads as the
//   product's (no middleware: no request log, metrics, request ids or CORS headers);
// - the body is parsed with the core's own JSON parser, the bearer token compared with the
//   session's, and the change applied to an in-memory stack of screen names under a lock;
// - the change is appended to one log file as a JSON line, and the handler waits for the
//   group commit that wrote it (`write` then `fdatasync`, one per group, on a thread of its own,
//   the way Redis's appendfsync always shares one fsync among the clients of a loop turn);
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

/// One log file and the thread that commits to it in groups.
final class GroupLog: Sendable {
    private struct Pending {
        var bytes: [UInt8] = []
        var waiters: [CheckedContinuation<Void, any Error>] = []
    }

    private let descriptor: Int32
    private let syncs: Bool
    private let pending = Mutex(Pending())
    private let ready = DispatchSemaphore(value: 0)
    private let groups = Atomic<Int>(0)

    /// Appends are committed in groups by a thread this starts; `syncs` false leaves out the
    /// `fdatasync` (to see what the rest costs, never to compare with a durable anchor).
    init(path: String, syncs: Bool) throws {
        self.syncs = syncs
        descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw BenchError.system("open(\(path))") }
        let thread = Thread { [self] in run() }
        thread.start()
    }

    /// Groups committed so far.
    var groupCount: Int { groups.load(ordering: .relaxed) }

    /// Returns once `record` is on disk (written and synced).
    func append(_ record: [UInt8]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let wasIdle = pending.withLock { pending -> Bool in
                let wasIdle = pending.waiters.isEmpty
                pending.bytes.append(contentsOf: record)
                pending.waiters.append(continuation)
                return wasIdle
            }
            if wasIdle { ready.signal() }
        }
    }

    private func run() {
        while true {
            ready.wait()
            let group = pending.withLock { pending -> Pending in
                defer { pending = Pending() }
                return pending
            }
            if group.waiters.isEmpty { continue }
            let failure = commit(group.bytes)
            groups.add(1, ordering: .relaxed)
            for waiter in group.waiters {
                if let failure { waiter.resume(throwing: failure) } else { waiter.resume() }
            }
        }
    }

    private func commit(_ bytes: [UInt8]) -> BenchError? {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
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

    /// Applies `change` to the session `id` when `token` is its token.
    func change(_ id: String, token: Substring, _ change: (inout FloorSession) -> String?) -> Outcome {
        shard(id).sessions.withLock { sessions -> Outcome in
            guard var session = sessions[id] else { return .notFound }
            guard session.token.utf8.elementsEqual(token.utf8) else { return .unauthorized }
            if let problem = change(&session) { return .conflict(problem) }
            session.version += 1
            sessions[id] = session
            return .changed(version: session.version, depth: session.screens.count)
        }
    }
}

struct FloorError: Error {
    var status: HTTPStatus
    var detail: String
}

func answer(_ outcome: FloorSessions.Outcome, id: String, operation: String, log: GroupLog) async throws -> Response {
    switch outcome {
    case .notFound: throw FloorError(status: .notFound, detail: "no session \(id)")
    case .unauthorized: throw FloorError(status: .unauthorized, detail: "wrong token")
    case .conflict(let detail): throw FloorError(status: .conflict, detail: detail)
    case .changed(let version, let depth):
        var record: [UInt8] = []
        record.reserveCapacity(96)
        record.append(contentsOf: #"{"session":"#.utf8)
        JSONValue.writeString(id, to: &record)
        record.append(contentsOf: #","version":\#(version),"op":"\#(operation)","depth":\#(depth)}"#.utf8)
        record.append(0x0A)
        try await log.append(record)
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
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
        exit(2)
    }
}

let log = try GroupLog(path: logPath, syncs: syncs)
let sessions = FloorSessions()
var lines = ""
for index in 0..<sessionCount {
    let id = "s_floor\(index)"
    let token = "t_\(UInt64.random(in: 0...UInt64.max))"
    // Five screens above the root, as bench-table's sessions have, so that a pop that
    // overtakes its push still finds a screen.
    sessions.insert(id, FloorSession(token: token, screens: ["Home"] + (0..<5).map { "List\($0)" }))
    lines += "\(id) \(token)\n"
}
try lines.write(toFile: sessionsFile, atomically: true, encoding: .utf8)

let router = Router()
router.post("/v1/sessions/{id}/push") { request async throws -> Response in
    let id = request.parameters["id"] ?? ""
    let members = try jsonObject(request)
    guard case .string(let name)? = members["name"], !name.isEmpty else {
        throw FloorError(status: .badRequest, detail: "name must be a non-empty string")
    }
    let outcome = sessions.change(id, token: bearer(request)) { session in
        guard session.screens.count < 1_000 else { return "the stack is full" }
        session.screens.append(name)
        return nil
    }
    return try await answer(outcome, id: id, operation: "push", log: log)
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
    let outcome = sessions.change(id, token: bearer(request)) { session in
        guard session.screens.count > count else { return "only \(session.screens.count - 1) screens to pop" }
        session.screens.removeLast(count)
        return nil
    }
    return try await answer(outcome, id: id, operation: "pop", log: log)
}
router.get("/healthz") { _ in Response(status: .ok, headers: ["Content-Type": "application/json"], body: Array(#"{"status":"ok"}"#.utf8)) }

let server = HTTPServer(
    configuration: HTTPServer.Configuration(port: port),
    responder: router.buildResponder(),
    errorResponder: { error, _ in
        let (status, detail) =
            if let error = error as? FloorError { (error.status, error.detail) } else {
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
