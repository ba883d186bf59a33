// api-bench [--seconds S] [--connections C] [--sessions N] [--memory-sessions M] [--skip-memory]
//           [--max-loaded-sessions L] [--skip-throughput] [--skip-batch] [--batch-operations K]
//           [--core-memory] [--max-hot-sessions H] [--dormant-reads]
//
//     swift run --package-path Benchmarks -c release api-bench
//
// What it measures:
//   1. push-then-pop pairs per second over keep-alive HTTP, C connections across N sessions, for
//      S seconds, against a server started in-process on a temp SQLite file (durable), then on
//      `:memory:`; prints pairs/s, p50/p99 latencies and the durable/in-memory ratio;
//   2. resident memory (VmRSS) after creating M sessions of 5 screens with 3 values on each
//      screen, through HTTP (a create with the root's values, then one `PUT …/path` with four
//      more screens), on a temp SQLite file, the server holding up to L sessions in memory
//      (`--max-loaded-sessions`, default 200,000, so all M stay resident): bytes per resident
//      session, beside how many were resident;
//   3. operations per second when K push/pop operations go as one `POST …/batch`
//      (one event, one commit) against the same K as single requests, durable, for S/2 s each,
//      on one connection (the figure checked) and on C.
//   4. (`--dormant-reads` only, not checked) GET /v1/sessions/{id} per second against sessions
//      kept in their full form and against sessions kept compact (`--max-hot-sessions`, 1,000
//      here, under 20,000 sessions, every GET going to the least recently read one): what a
//      request to a compact session costs (its rebuild, its rendering, its actor), on C
//      connections and on one.
// `--max-hot-sessions H` sets the server's hot set for the memory phase (its default when absent;
// above the count, every session stays in its full form: the figure before compact sessions).
// Each figure is compared with Benchmarks/Thresholds/api.json (exit 1 when one is not met).
import BenchmarkSupport
import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions

#if canImport(Glibc)
    import Glibc
#endif

struct Options {
    var seconds = 10.0
    var connections = 64
    var sessions = 1_000
    var memorySessions = 100_000
    var maxLoadedSessions = 200_000
    var skipMemory = false
    var skipThroughput = false
    var skipBatch = false
    var batchOperations = 20
    var coreMemory = false
    var maxHotSessions: Int?
    var dormantReads = false

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            switch flag {
            case "--seconds": seconds = Double(rest.popFirst() ?? "") ?? seconds
            case "--connections": connections = Int(rest.popFirst() ?? "") ?? connections
            case "--sessions": sessions = Int(rest.popFirst() ?? "") ?? sessions
            case "--memory-sessions": memorySessions = Int(rest.popFirst() ?? "") ?? memorySessions
            case "--max-loaded-sessions": maxLoadedSessions = Int(rest.popFirst() ?? "") ?? maxLoadedSessions
            case "--skip-memory": skipMemory = true
            case "--skip-throughput": skipThroughput = true
            case "--skip-batch": skipBatch = true
            case "--batch-operations": batchOperations = max(2, (Int(rest.popFirst() ?? "") ?? batchOperations) / 2 * 2)
            case "--core-memory": coreMemory = true
            case "--max-hot-sessions": maxHotSessions = Int(rest.popFirst() ?? "")
            case "--dormant-reads": dormantReads = true
            default:
                FileHandle.standardError.write(Data("api-bench: unknown flag \(flag)\n".utf8))
                exit(2)
            }
        }
    }
}

/// A session the load drives.
struct BenchSession: Sendable {
    var id: String
    var token: String
}

/// VmRSS in MB after handing freed heap pages back, so the figure counts live memory rather
/// than what the client threads' malloc arenas keep cached.
func residentMegabytes() throws -> Double {
    Double(try ProcessFigures.residentKiB(trimmingHeap: true)) / 1024
}

func startServer(
    database: String, maxLoadedSessions: Int? = nil, maxHotSessions: Int? = nil
) async throws -> NavigationValuesServer {
    var configuration = NavigationValuesServer.Configuration()
    configuration.port = 0
    configuration.databasePath = database
    configuration.adminToken = "bench-admin"
    if let maxLoadedSessions { configuration.service.maxLoadedSessions = maxLoadedSessions }
    if let maxHotSessions { configuration.service.maxHotSessions = maxHotSessions }
    return try await NavigationValuesServer.start(configuration)
}

/// Creates `count` sessions over `connections` connections; `root` and `path` are the bodies.
func createSessions(
    port: Int, count: Int, connections: Int, root: JSONValue, path: JSONValue?, keep: Bool = true
) async throws -> [BenchSession] {
    let createBody = Array(JSONValue.object(["root": root]).serialized().utf8)
    let pathBody = path.map { Array($0.serialized().utf8) }
    let perConnection = await onThreads(connections) { index -> Result<[BenchSession], BenchError> in
        do {
            let connection = try HTTPConnection(port: port)
            var made: [BenchSession] = []
            for _ in stride(from: index, to: count, by: connections) {
                // As the admin: exempt from the per-address creation limit (--create-burst 200).
                let answer = try connection.send("POST", "/v1/sessions", token: "bench-admin", body: createBody)
                guard answer.status == 201, let json = try? JSONValue(parsing: answer.body),
                    let id = json["id"]?.stringValue, let token = json["token"]?.stringValue
                else { return .failure(BenchError("create answered \(answer.status)")) }
                if let pathBody {
                    let replaced = try connection.send("PUT", "/v1/sessions/\(id)/path", token: token, body: pathBody)
                    guard replaced.status == 200 else {
                        return .failure(BenchError("path answered \(replaced.status)"))
                    }
                }
                // The memory run keeps only a count, so the client's own copies are not measured.
                made.append(keep ? BenchSession(id: id, token: token) : BenchSession(id: "", token: ""))
            }
            return .success(made)
        } catch {
            return .failure(BenchError("\(error)"))
        }
    }
    var sessions: [BenchSession] = []
    for result in perConnection { sessions += try result.get() }
    return sessions
}

struct RunResult {
    var pairs: Int
    var seconds: Double
    var pairLatencies: [UInt64]  // nanoseconds, sorted
    var requestLatencies: [UInt64]  // nanoseconds, sorted

    var pairsPerSecond: Double { Double(pairs) / seconds }

    /// The latency at quantile `p` of `sorted` nanoseconds, in milliseconds.
    static func percentile(_ sorted: [UInt64], _ p: Double) -> Double {
        Double(Statistics.quantile(sorted, p)) / 1_000_000
    }
}

/// Push-then-pop pairs on every connection until `seconds` have passed. Connection `i` drives the
/// sessions `i`, `i + C`, `i + 2C`, … in turn, so no two connections share a session.
func pushPopLoad(port: Int, sessions: [BenchSession], connections: Int, seconds: Double) async throws -> RunResult {
    let pushBody = Array(#"{"name":"Detail","values":{"title":"bench"}}"#.utf8)
    let popBody = Array(#"{"count":1}"#.utf8)
    let start = DispatchTime.now().uptimeNanoseconds
    let deadline = start + UInt64(seconds * 1e9)
    let perConnection = await onThreads(connections) { index -> Result<([UInt64], [UInt64]), BenchError> in
        do {
            let connection = try HTTPConnection(port: port)
            let mine = stride(from: index, to: sessions.count, by: connections).map { sessions[$0] }
            var pairs: [UInt64] = []
            var requests: [UInt64] = []
            pairs.reserveCapacity(100_000)
            requests.reserveCapacity(200_000)
            var turn = 0
            while true {
                let before = DispatchTime.now().uptimeNanoseconds
                if before >= deadline || mine.isEmpty { break }
                let session = mine[turn % mine.count]
                turn += 1
                let pushed = try connection.send(
                    "POST", "/v1/sessions/\(session.id)/push", token: session.token, body: pushBody)
                let middle = DispatchTime.now().uptimeNanoseconds
                guard pushed.status == 201 else { return .failure(BenchError("push \(pushed.status)")) }
                let popped = try connection.send(
                    "POST", "/v1/sessions/\(session.id)/pop", token: session.token, body: popBody)
                let after = DispatchTime.now().uptimeNanoseconds
                guard popped.status == 200 else { return .failure(BenchError("pop \(popped.status)")) }
                pairs.append(after - before)
                requests.append(middle - before)
                requests.append(after - middle)
            }
            return .success((pairs, requests))
        } catch {
            return .failure(BenchError("\(error)"))
        }
    }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    var pairs: [UInt64] = []
    var requests: [UInt64] = []
    for result in perConnection {
        let (p, r) = try result.get()
        pairs += p
        requests += r
    }
    pairs.sort()
    requests.sort()
    return RunResult(pairs: pairs.count, seconds: elapsed, pairLatencies: pairs, requestLatencies: requests)
}

func report(_ label: String, _ result: RunResult) {
    let line = String(
        format: "%@: %.0f pairs/s (%d pairs in %.1f s); pair p50 %.2f ms p99 %.2f ms; request p50 %.2f ms p99 %.2f ms",
        label, result.pairsPerSecond, result.pairs, result.seconds,
        RunResult.percentile(result.pairLatencies, 0.50), RunResult.percentile(result.pairLatencies, 0.99),
        RunResult.percentile(result.requestLatencies, 0.50), RunResult.percentile(result.requestLatencies, 0.99))
    say(line)
}

func temporaryDatabase() throws -> (folder: URL, path: String) {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("api-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return (folder, folder.appendingPathComponent("bench.sqlite").path)
}

func throughput(_ options: Options, database: String, label: String) async throws -> RunResult {
    let server = try await startServer(database: database)
    do {
        let sessions = try await createSessions(
            port: server.port, count: options.sessions, connections: options.connections,
            root: ["name": "Home", "values": ["title": "home"]], path: nil)
        // A short warm-up, so both runs start with loaded sessions and warm caches.
        _ = try await pushPopLoad(
            port: server.port, sessions: sessions, connections: options.connections, seconds: min(1, options.seconds))
        let result = try await pushPopLoad(
            port: server.port, sessions: sessions, connections: options.connections, seconds: options.seconds)
        report(label, result)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}

func memory(_ options: Options, _ thresholds: Thresholds) async throws {
    let (folder, path) = try temporaryDatabase()
    defer { try? FileManager.default.removeItem(at: folder) }
    let server = try await startServer(
        database: path, maxLoadedSessions: options.maxLoadedSessions, maxHotSessions: options.maxHotSessions)
    let before = try residentMegabytes()
    let values: JSONValue = ["title": "a title", "counter": 42, "flag": true]
    let screens = JSONValue.array((1...4).map { index in ["name": .string("Screen \(index)"), "values": values] })
    let start = DispatchTime.now().uptimeNanoseconds
    let sessions = try await createSessions(
        port: server.port, count: options.memorySessions, connections: options.connections,
        root: ["name": "Home", "values": values], path: ["screens": screens], keep: false)
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    let after = try residentMegabytes()
    let loaded = try HTTPConnection(port: server.port).metric("navigation_values_sessions_loaded")
    let hot = try HTTPConnection(port: server.port).metric("navigation_values_sessions_hot")
    // Per resident session: what the server holds for each session in memory (all of them, when
    // --max-loaded-sessions is above the count).
    let perSession = (after - before) * 1_048_576 / max(1, loaded)
    say(
        String(
            format:
                "memory: %d sessions x 5 screens x 3 values (over HTTP, file database, --max-loaded-sessions %d) in %.1f s; VmRSS %.0f MB before, %.0f MB after; %.0f sessions resident, %.0f of them in full form",
            sessions.count, options.maxLoadedSessions, seconds, before, after, loaded, hot))
    await server.shutdown()
    thresholds.check(
        "maxBytesPerResidentSession", perSession,
        String(format: "memory per resident session (%.0f resident)", loaded), unit: "bytes", decimals: 0)
}

/// GETs of whole sessions for `seconds` on `connections` connections, connection `i` reading
/// `sessions[i]`, `sessions[i + C]`, … in turn: reads per second and the p50/p99 latency (ms).
func readLoad(
    port: Int, sessions: [BenchSession], connections: Int, seconds: Double
) async throws -> (perSecond: Double, p50: Double, p99: Double) {
    let start = DispatchTime.now().uptimeNanoseconds
    let deadline = start + UInt64(seconds * 1e9)
    let perConnection = await onThreads(connections) { index -> Result<[UInt64], BenchError> in
        do {
            let connection = try HTTPConnection(port: port)
            let mine = stride(from: index, to: sessions.count, by: connections).map { sessions[$0] }
            var latencies: [UInt64] = []
            latencies.reserveCapacity(200_000)
            var turn = 0
            while !mine.isEmpty {
                let before = DispatchTime.now().uptimeNanoseconds
                if before >= deadline { break }
                let session = mine[turn % mine.count]
                turn += 1
                let answer = try connection.send("GET", "/v1/sessions/\(session.id)", token: session.token)
                guard answer.status == 200 else { return .failure(BenchError("GET answered \(answer.status)")) }
                latencies.append(DispatchTime.now().uptimeNanoseconds - before)
            }
            return .success(latencies)
        } catch {
            return .failure(BenchError("\(error)"))
        }
    }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    var latencies: [UInt64] = []
    for result in perConnection { latencies += try result.get() }
    latencies.sort()
    return (
        Double(latencies.count) / elapsed, RunResult.percentile(latencies, 0.50), RunResult.percentile(latencies, 0.99)
    )
}

/// GET throughput against full sessions and against compact ones (see the header, phase 4).
func dormantReads(_ options: Options) async throws {
    let (folder, path) = try temporaryDatabase()
    defer { try? FileManager.default.removeItem(at: folder) }
    let maxHot = options.maxHotSessions ?? 1_000
    let server = try await startServer(database: path, maxLoadedSessions: 200_000, maxHotSessions: maxHot)
    do {
        let values: JSONValue = ["title": "a title", "counter": 42, "flag": true]
        let screens = JSONValue.array((1...4).map { index in ["name": .string("Screen \(index)"), "values": values] })
        let sessions = try await createSessions(
            port: server.port, count: 20 * maxHot, connections: options.connections,
            root: ["name": "Home", "values": values], path: ["screens": screens])
        let hotOnes = Array(sessions.suffix(maxHot / 2))
        let metrics = try HTTPConnection(port: server.port)
        for connections in [options.connections, 1] {
            let seconds = options.seconds / 2
            _ = try await readLoad(port: server.port, sessions: hotOnes, connections: connections, seconds: 1)
            let hot = try await readLoad(port: server.port, sessions: hotOnes, connections: connections, seconds: seconds)
            let hotSet = try metrics.metric("navigation_values_sessions_hot")
            let dormant = try await readLoad(
                port: server.port, sessions: sessions, connections: connections, seconds: seconds)
            say(
                String(
                    format:
                        "GET a session, %d connection(s), %.0f s each: full sessions %.0f/s (p50 %.3f ms, p99 %.3f ms); compact sessions (%d of %d kept full, each GET to the least recently read) %.0f/s (p50 %.3f ms, p99 %.3f ms); hot set %.0f",
                    connections, seconds, hot.perSecond, hot.p50, hot.p99, maxHot, sessions.count, dormant.perSecond,
                    dormant.p50, dormant.p99, hotSet))
        }
        await server.shutdown()
    } catch {
        await server.shutdown()
        throw error
    }
}

/// The core library's share: the same sessions as bare `ScreenStack`s, no server around them.
func coreMemory(_ options: Options) throws {
    let before = try residentMegabytes()
    var stacks: [ScreenStack<Void>] = []
    stacks.reserveCapacity(options.memorySessions)
    let keys = [NamedValueKey("title"), NamedValueKey("counter"), NamedValueKey("flag")]
    let values: [JSONValue] = ["a title", 42, true]
    for _ in 0..<options.memorySessions {
        let stack = ScreenStack()
        for _ in 0..<5 {
            let context = stack.push()
            for (key, value) in zip(keys, values) { context.setValue(value, for: key) }
        }
        stacks.append(stack)
    }
    let after = try residentMegabytes()
    say(
        String(
            format:
                "core only: %d ScreenStacks x 5 screens x 3 values: VmRSS %.0f MB before, %.0f MB after (%.0f bytes per stack)",
            stacks.count, before, after, (after - before) * 1_048_576 / Double(max(1, stacks.count))))
}

let options = Options(CommandLine.arguments)
do {
    let thresholds = try Thresholds.load("api")
    if options.coreMemory {
        try coreMemory(options)
        exit(0)
    }
    if options.dormantReads {
        try await dormantReads(options)
        exit(0)
    }
    if !options.skipThroughput {
        say(
            "push-then-pop pairs over keep-alive HTTP: \(options.connections) connections, \(options.sessions) sessions, \(options.seconds) s each"
        )
        let (folder, path) = try temporaryDatabase()
        let durable = try await throughput(options, database: path, label: "durable (file, sync normal)")
        try? FileManager.default.removeItem(at: folder)
        let inMemory = try await throughput(options, database: ":memory:", label: "in memory (:memory:)")
        let ratio = durable.pairsPerSecond / inMemory.pairsPerSecond
        say(String(format: "durable / in-memory: %.2f (persistence costs %.0f%%)", ratio, (1 - ratio) * 100))
        thresholds.check("minDurablePairsPerSecond", durable.pairsPerSecond, "durable", unit: "pairs/s", decimals: 0)
        thresholds.check(
            "minInMemoryPairsPerSecond", inMemory.pairsPerSecond, "in memory", unit: "pairs/s", decimals: 0)
        thresholds.check("minDurableToInMemoryRatio", ratio, "durable / in-memory", unit: "", decimals: 2)
    }
    if !options.skipBatch { try await batches(options, thresholds) }
    if !options.skipMemory { try await memory(options, thresholds) }
    thresholds.exitWithVerdict()
} catch {
    FileHandle.standardError.write(Data("api-bench: \(error)\n".utf8))
    exit(1)
}
