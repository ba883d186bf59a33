// postgres-bench [--url URL] [--seconds S] [--connections C] [--sessions N] [--samples K]
//                [--write-behind-events N]
//
//     swift run --package-path Benchmarks -c release postgres-bench
//
// What it measures, all in one run on one machine:
//   1. durable push/pop mutations/s over keep-alive HTTP, C connections across N sessions, for S
//      seconds: SQLite (a temp file, sync normal: the anchor), PostgreSQL with one instance, and
//      PostgreSQL with two instances (two servers in this process on one database): once with
//      each connection on one instance (sessions split, sticky), once with every pop sent to the
//      other instance than its push (no stickiness: every request may meet a stale copy);
//      For the one instance: WAL bytes per mutation (pg_current_wal_lsn) and the share of the
//      sessions' updates that were HOT (pg_stat_user_tables; Migrations/postgres/0006);
//   2. cross-instance event latency: a writer pushes and pops through instance A while an SSE
//      subscriber reads the session on instance B; p50/p99 from sending the write to the event
//      on B (and the same with the subscriber on A, as the anchor).
// PostgreSQL: `--url` or NAVIGATION_VALUES_BENCH_POSTGRES_URL (a role that may create databases),
// else a throwaway cluster started with scripts/postgres-cluster.sh (fsync on: durable as shipped).
// `--write-behind-events N` sets every server's bound of events whose state rows wait behind the
// log (default 1000, the server's; 0 writes them in each mutation's transaction: the write path
// before log-first commits, to compare the two on one build).
// Each figure is compared with Benchmarks/Thresholds/postgres.json (exit 1 when one is not met).
import BenchmarkSupport
import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesStore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

struct Options {
    var url = ProcessInfo.processInfo.environment["NAVIGATION_VALUES_BENCH_POSTGRES_URL"]
    var seconds = 10.0
    var connections = 32
    var sessions = 256
    var samples = 500
    var writeBehindEvents: Int?

    init(_ arguments: [String]) {
        var rest = arguments.dropFirst()
        while let flag = rest.popFirst() {
            switch flag {
            case "--url": url = rest.popFirst()
            case "--seconds": seconds = Double(rest.popFirst() ?? "") ?? seconds
            case "--connections": connections = Int(rest.popFirst() ?? "") ?? connections
            case "--sessions": sessions = Int(rest.popFirst() ?? "") ?? sessions
            case "--samples": samples = Int(rest.popFirst() ?? "") ?? samples
            case "--write-behind-events": writeBehindEvents = Int(rest.popFirst() ?? "")
            default:
                FileHandle.standardError.write(Data("postgres-bench: unknown flag \(flag)\n".utf8))
                exit(2)
            }
        }
    }
}

let repository = Thresholds.folder.deletingLastPathComponent().deletingLastPathComponent()

/// Runs a command and returns its stdout (trimmed); throws when it fails. Through `system(3)`,
/// which waits with waitpid (Foundation's `Process.waitUntilExit` waits on a run loop that an
/// async main never spins), and stdout to a file, not a pipe: a server the command leaves running
/// (pg_ctl's) may inherit the descriptor, and a pipe would then never reach its end.
func run(_ arguments: [String]) throws -> String {
    let output = FileManager.default.temporaryDirectory.appendingPathComponent("postgres-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: output) }
    func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    let command = arguments.map(quoted).joined(separator: " ") + " </dev/null >" + quoted(output.path)
    let status = system(command)
    guard status == 0 else { throw BenchError("\(arguments) exited with status \(status)") }
    let text = String(decoding: FileManager.default.contents(atPath: output.path) ?? Data(), as: UTF8.self)
    return text.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// A fresh database on the server at `admin`, by psql.
func createDatabase(admin: String) throws -> String {
    let name = "nv_bench_\(UUID().uuidString.prefix(8).lowercased())"
    _ = try run(["psql", "-X", "-q", "-d", admin, "-c", "CREATE DATABASE \(name)"])
    guard var components = URLComponents(string: admin) else { throw BenchError("not a URL: \(admin)") }
    components.path = "/" + name
    return components.string ?? admin
}

func startServer(database: String, writeBehindEvents: Int?) async throws -> NavigationValuesServer {
    var configuration = NavigationValuesServer.Configuration()
    configuration.port = 0
    configuration.databasePath = database
    configuration.adminToken = "bench-admin"
    configuration.eventLoopCount = 2
    if let writeBehindEvents { configuration.writeBehind.maximumEvents = writeBehindEvents }
    return try await NavigationValuesServer.start(configuration)
}

struct BenchSession: Sendable {
    var id: String
    var token: String
}

func createSessions(port: Int, count: Int) throws -> [BenchSession] {
    let connection = try HTTPConnection(port: port)
    return try (0..<count).map { _ in
        // As the admin: exempt from the per-address creation limit (--create-burst 200).
        let answer = try connection.send(
            "POST", "/v1/sessions", token: "bench-admin", json: #"{"root":{"name":"Home"}}"#)
        guard answer.status == 201, let json = answer.json, let id = json["id"]?.stringValue,
            let token = json["token"]?.stringValue
        else { throw BenchError("create answered \(answer.status): \(answer.text)") }
        return BenchSession(id: id, token: token)
    }
}

/// Push-then-pop pairs for `seconds` on `connections` workers; worker `i` drives sessions `i`,
/// `i + C`, … and sends its pushes to `pushPorts[i % count]`, its pops to `popPorts[i % count]`.
/// Returns the mutations and the seconds they took.
func pushPop(pushPorts: [Int], popPorts: [Int], sessions: [BenchSession], connections: Int, seconds: Double)
    async throws -> PushPopRun
{
    let pushBody = Array(#"{"name":"Detail","values":{"title":"bench"}}"#.utf8)
    let popBody = Array(#"{"count":1}"#.utf8)
    let start = DispatchTime.now().uptimeNanoseconds
    let deadline = start + UInt64(seconds * 1e9)
    let counts = await onThreads(connections) { index -> Result<Int, BenchError> in
        do {
            let pusher = try HTTPConnection(port: pushPorts[index % pushPorts.count])
            let popPort = popPorts[index % popPorts.count]
            let popper = popPort == pushPorts[index % pushPorts.count] ? pusher : try HTTPConnection(port: popPort)
            let mine = stride(from: index, to: sessions.count, by: connections).map { sessions[$0] }
            var mutations = 0
            var turn = 0
            while DispatchTime.now().uptimeNanoseconds < deadline, !mine.isEmpty {
                let session = mine[turn % mine.count]
                turn += 1
                let pushed = try pusher.send(
                    "POST", "/v1/sessions/\(session.id)/push", token: session.token, body: pushBody)
                guard pushed.status == 201 else { return .failure(BenchError("push \(pushed.status): \(pushed.text)")) }
                let popped = try popper.send(
                    "POST", "/v1/sessions/\(session.id)/pop", token: session.token, body: popBody)
                guard popped.status == 200 else { return .failure(BenchError("pop \(popped.status): \(popped.text)")) }
                mutations += 2
            }
            return .success(mutations)
        } catch {
            return .failure(BenchError("\(error)"))
        }
    }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    var total = 0
    for count in counts { total += try count.get() }
    return PushPopRun(mutations: total, seconds: elapsed)
}

struct PushPopRun {
    var mutations: Int
    var seconds: Double
    var rate: Double { Double(mutations) / seconds }
}

/// Warms up for a second, calls `afterWarmUp`, then measures.
func measure(
    _ label: String, pushPorts: [Int], popPorts: [Int], sessions: [BenchSession], _ options: Options,
    afterWarmUp: () throws -> Void = {}
) async throws -> PushPopRun {
    _ = try await pushPop(
        pushPorts: pushPorts, popPorts: popPorts, sessions: sessions, connections: options.connections,
        seconds: min(1, options.seconds))
    try afterWarmUp()
    let run = try await pushPop(
        pushPorts: pushPorts, popPorts: popPorts, sessions: sessions, connections: options.connections,
        seconds: options.seconds)
    say(String(format: "%@: %.0f mutations/s", label, run.rate))
    return run
}

// MARK: - What PostgreSQL wrote

/// `query`'s one value on `database`, by psql.
func value(_ query: String, on database: String) throws -> String {
    try run(["psql", "-X", "-A", "-t", "-q", "-d", database, "-c", query])
}

/// Updates of `sessions`, and how many of them were HOT (heap-only: no index entry added;
/// Migrations/postgres/0006), from `pg_stat_user_tables`. A backend reports its counts when it
/// exits: call after the servers on `database` shut down; waits up to 10 s for the counts to settle.
func sessionUpdates(on database: String) throws -> (updates: Int, hot: Int) {
    var last: (Int, Int) = (-1, -1)
    for _ in 0..<20 {
        let parts = try value(
            "SELECT n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'sessions'",
            on: database
        ).split(separator: " ").compactMap { Int($0) }
        guard parts.count == 2 else { throw BenchError("no statistics for sessions on \(database)") }
        let counts = (parts[0], parts[1])
        if counts == last { return counts }
        last = counts
        usleep(500_000)
    }
    return last
}

// MARK: - Event latency

/// Reads one SSE stream on a thread of its own and notes when each event id arrives.
final class ArrivalClock: Sendable {
    private let arrivals = Mutex<[Int64: UInt64]>([:])
    private let fd: Int32

    init(port: Int, path: String, token: String) throws {
        fd = try RawSocket.connect(port: port)
        try RawSocket.sendAll(
            fd,
            Array(
                "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nAuthorization: Bearer \(token)\r\n\r\n"
                    .utf8))
        let thread = Thread { [self] in read() }
        thread.start()
    }

    private func read() {
        var pending: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let marker = Array("\nid: ".utf8)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            let now = ProcessFigures.now()
            pending += chunk[..<count]
            // Each "\nid: N\n" is one event; keep the unfinished tail for the next read.
            var index = 0
            var consumed = 0
            while index + marker.count < pending.count {
                if Array(pending[index..<(index + marker.count)]) == marker {
                    var end = index + marker.count
                    while end < pending.count, pending[end] != 0x0A { end += 1 }
                    guard end < pending.count else { break }
                    if let seq = Int64(String(decoding: pending[(index + marker.count)..<end], as: UTF8.self)) {
                        arrivals.withLock { $0[seq] = now }
                    }
                    index = end
                    consumed = end
                } else {
                    index += 1
                }
            }
            pending.removeFirst(max(0, consumed))
        }
    }

    func arrival(of seq: Int64) -> UInt64? { arrivals.withLock { $0[seq] } }

    func close() { shutdown(fd, Int32(SHUT_RDWR)) }
}

/// `samples` pushes and pops through `writerPort`, one at a time, each waiting for its event on
/// the subscriber; returns the latencies from sending the write to the event's arrival, sorted.
func eventLatencies(writerPort: Int, subscriberPort: Int, samples: Int) async throws -> [UInt64] {
    let session = try createSessions(port: writerPort, count: 1)[0]
    let clock = try ArrivalClock(
        port: subscriberPort, path: "/v1/sessions/\(session.id)/events?after=1", token: session.token)
    defer { clock.close() }
    let results = await onThreads(1) { _ -> Result<[UInt64], BenchError> in
        do {
            let writer = try HTTPConnection(port: writerPort)
            var latencies: [UInt64] = []
            for index in 0..<samples {
                let sent = ProcessFigures.now()
                let answer =
                    index.isMultiple(of: 2)
                    ? try writer.send(
                        "POST", "/v1/sessions/\(session.id)/push", token: session.token, json: #"{"name":"D"}"#)
                    : try writer.send("POST", "/v1/sessions/\(session.id)/pop", token: session.token, json: "{}")
                guard let version = answer.json?["version"]?.integerValue else {
                    return .failure(BenchError("write answered \(answer.status): \(answer.text)"))
                }
                let deadline = sent + 10_000_000_000
                while clock.arrival(of: version) == nil {
                    guard ProcessFigures.now() < deadline else {
                        return .failure(BenchError("event \(version) never arrived"))
                    }
                    sched_yield()
                }
                latencies.append((clock.arrival(of: version) ?? sent) - sent)
            }
            return .success(latencies.sorted())
        } catch {
            return .failure(BenchError("\(error)"))
        }
    }
    return try results[0].get()
}

func milliseconds(_ sorted: [UInt64], _ quantile: Double) -> Double {
    Double(Statistics.quantile(sorted, quantile)) / 1_000_000
}

// MARK: - Main

let options = Options(CommandLine.arguments)
var clusterFolder: String?
do {
    let thresholds = try Thresholds.load("postgres")
    let admin: String
    if let url = options.url {
        admin = url
    } else {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-bench-pg-\(UUID().uuidString)")
            .path
        clusterFolder = folder
        admin = try run([repository.appendingPathComponent("scripts/postgres-cluster.sh").path, "start", folder])
        say("PostgreSQL: a throwaway cluster (fsync on) at \(admin)")
    }
    say(
        "durable push/pop mutations over keep-alive HTTP: \(options.connections) connections, \(options.sessions) sessions, \(options.seconds) s each; load \(ProcessFigures.loadAverage())"
    )
    // SQLite, the anchor.
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let sqlite = try await startServer(
        database: folder.appendingPathComponent("bench.sqlite").path, writeBehindEvents: options.writeBehindEvents)
    let sqliteRate = try await measure(
        "SQLite (file, sync normal), one instance", pushPorts: [sqlite.port], popPorts: [sqlite.port],
        sessions: try createSessions(port: sqlite.port, count: options.sessions), options
    ).rate
    await sqlite.shutdown()
    try? FileManager.default.removeItem(at: folder)

    // PostgreSQL, one instance, and what it wrote: WAL bytes per mutation over the measured
    // seconds, and the share of the sessions' updates that were HOT (warm-up included).
    let singleDatabase = try createDatabase(admin: admin)
    let single = try await startServer(database: singleDatabase, writeBehindEvents: options.writeBehindEvents)
    var walStart = ""
    let singleRun = try await measure(
        "PostgreSQL, one instance", pushPorts: [single.port], popPorts: [single.port],
        sessions: try createSessions(port: single.port, count: options.sessions), options,
        afterWarmUp: { walStart = try value("SELECT pg_current_wal_lsn()", on: singleDatabase) })
    let walBytes =
        Double(try value("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '\(walStart)')", on: singleDatabase)) ?? 0
    await single.shutdown()
    let singleRate = singleRun.rate
    let updates = try sessionUpdates(on: singleDatabase)
    let hotShare = updates.updates > 0 ? Double(updates.hot) / Double(updates.updates) : 0
    say(
        String(
            format: "  WAL %.0f bytes per mutation; sessions' updates HOT: %.1f%% (%d of %d)",
            walBytes / Double(max(1, singleRun.mutations)), hotShare * 100, updates.hot, updates.updates))

    // PostgreSQL, two instances on one database.
    let database = try createDatabase(admin: admin)
    let a = try await startServer(database: database, writeBehindEvents: options.writeBehindEvents)
    let b = try await startServer(database: database, writeBehindEvents: options.writeBehindEvents)
    let shared = try createSessions(port: a.port, count: options.sessions)
    let splitRate = try await measure(
        "PostgreSQL, two instances (each connection on one)", pushPorts: [a.port, b.port], popPorts: [a.port, b.port],
        sessions: shared, options
    ).rate
    let alternatingRate = try await measure(
        "PostgreSQL, two instances (push on one, pop on the other)", pushPorts: [a.port, b.port],
        popPorts: [b.port, a.port], sessions: shared, options
    ).rate
    say(
        String(
            format: "ratios to SQLite: one instance %.2f, two instances %.2f (alternating %.2f); two / one: %.2f",
            singleRate / sqliteRate, splitRate / sqliteRate, alternatingRate / sqliteRate, splitRate / singleRate))

    // Cross-instance event latency, and the same-instance anchor.
    say("event latency, write sent -> event read by a subscriber (\(options.samples) writes, one at a time):")
    let across = try await eventLatencies(writerPort: a.port, subscriberPort: b.port, samples: options.samples)
    let within = try await eventLatencies(writerPort: a.port, subscriberPort: a.port, samples: options.samples)
    say(
        String(
            format: "  write on A -> subscriber on B: p50 %.2f ms, p99 %.2f ms", milliseconds(across, 0.5),
            milliseconds(across, 0.99)))
    say(
        String(
            format: "  write on A -> subscriber on A (anchor): p50 %.2f ms, p99 %.2f ms", milliseconds(within, 0.5),
            milliseconds(within, 0.99)))
    await a.shutdown()
    await b.shutdown()

    thresholds.check("minSQLiteMutationsPerSecond", sqliteRate, "SQLite", unit: "mutations/s", decimals: 0)
    thresholds.check(
        "minOneInstanceMutationsPerSecond", singleRate, "PostgreSQL, one instance", unit: "mutations/s", decimals: 0)
    thresholds.check(
        "minTwoInstanceMutationsPerSecond", splitRate, "PostgreSQL, two instances", unit: "mutations/s", decimals: 0)
    thresholds.check(
        "minAlternatingMutationsPerSecond", alternatingRate, "PostgreSQL, two instances alternating",
        unit: "mutations/s",
        decimals: 0)
    thresholds.check(
        "minSessionUpdatesHOTShare", hotShare, "sessions' updates that were HOT (one instance)", unit: "",
        decimals: 3)
    thresholds.check(
        "maxCrossInstanceLatencyP50Milliseconds", milliseconds(across, 0.5), "cross-instance p50", unit: "ms",
        decimals: 2)
    thresholds.check(
        "maxCrossInstanceLatencyP99Milliseconds", milliseconds(across, 0.99), "cross-instance p99", unit: "ms",
        decimals: 2)
    if let clusterFolder {
        _ = try? run([repository.appendingPathComponent("scripts/postgres-cluster.sh").path, "stop", clusterFolder])
    }
    thresholds.exitWithVerdict()
} catch {
    if let clusterFolder {
        _ = try? run([repository.appendingPathComponent("scripts/postgres-cluster.sh").path, "stop", clusterFolder])
    }
    FileHandle.standardError.write(Data("postgres-bench: \(error)\n".utf8))
    exit(1)
}
