import BenchmarkSupport
import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesStore

#if canImport(Glibc)
    import Glibc
#endif

/// The three measurements. Main-actor isolated on purpose: the bench's clients block (socket
/// reads, waits), and they must block the main thread, never the cooperative pool the server's
/// tasks run on (two threads on this machine).
@MainActor
enum Bench {
    static let fanOutSubscribers = 1_000
    static let fanOutPushes = 50
    static let idleSubscribers = 10_000
    static let replayEvents = 20_000
    static let replayWriters = 8

    /// The phases to run, in order; all three when none is named.
    enum Phase: String, CaseIterable {
        case idle, fanout, replay
    }

    static let usage = "usage: events-bench [--event-loops N] [idle] [fanout] [replay]"
    /// The figures' thresholds, `Benchmarks/Thresholds/events.json`.
    static let thresholds: Thresholds = {
        do {
            return try Thresholds.load("events")
        } catch {
            FileHandle.standardError.write(Data("events-bench: \(error)\n".utf8))
            exit(1)
        }
    }()
    /// The server's event-loop threads (`--event-loops`); nil for its default, one per core.
    static var eventLoops: Int?

    static func run(_ arguments: [String]) async throws {
        var phases: [Phase] = []
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--event-loops" {
                guard let value = remaining.popFirst().flatMap({ Int($0) }), value > 0 else {
                    throw BenchError("--event-loops needs a positive number; \(usage)")
                }
                eventLoops = value
            } else if let phase = Phase(rawValue: argument) {
                phases.append(phase)
            } else {
                throw BenchError("unknown argument \(argument); \(usage)")
            }
        }
        if phases.isEmpty { phases = Phase.allCases }
        _ = thresholds  // read the file before measuring anything
        let start = ContinuousClock.now
        let fileLimit = try ProcessFigures.raiseFileLimit()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("events-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        say("events-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores, open-file limit \(fileLimit)")
        say(
            "SQLite files in \(folder.path), sync normal, server event loops: \(eventLoops.map(String.init) ?? "one per core")"
        )
        say("(client and server share this machine's cores; figures move with its load: run it on a quiet machine)")
        say("load average at start: \(ProcessFigures.loadAverage())\n")

        for phase in phases {
            switch phase {
            case .idle: try await idle(in: folder)
            case .fanout: try await fanOut(in: folder)
            case .replay: try await replay(in: folder)
            }
        }
        say(
            "\ntotal \(Statistics.format(ContinuousClock.now - start)), load average at end: \(ProcessFigures.loadAverage())"
        )
    }

    // MARK: - Servers and sessions

    static func withServer<T>(
        _ path: String, snapshotInterval: Int = ServiceConfiguration().snapshotInterval,
        _ body: (NavigationValuesServer) async throws -> T
    ) async throws -> T {
        var configuration = NavigationValuesServer.Configuration()
        configuration.port = 0
        configuration.databasePath = path
        configuration.adminToken = "events-bench-admin"
        configuration.service.snapshotInterval = snapshotInterval
        configuration.eventLoopCount = eventLoops
        // Every subscriber of a run is on one session: above the defaults (--max-subscribers-per-session
        // 100, --max-subscribers 10,000), which would answer 503 from the 101st.
        configuration.subscribers.maxPerSession = idleSubscribers + 100
        configuration.subscribers.maxTotal = idleSubscribers + 100
        let server = try await NavigationValuesServer.start(configuration)
        do {
            let result = try await body(server)
            await server.shutdown()
            return result
        } catch {
            await server.shutdown()
            throw error
        }
    }

    /// Creates a session; returns its id and token.
    static func createSession(_ client: HTTPConnection) throws -> (id: String, token: String) {
        let reply = try client.send("POST", "/v1/sessions", json: #"{"root":{"name":"Home"}}"#)
        guard reply.status == 201, let json = reply.json, let id = json["id"]?.stringValue,
            let token = json["token"]?.stringValue
        else {
            throw BenchError(
                "POST /v1/sessions answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
        }
        return (id, token)
    }

    /// Waits for `condition`, polling every 5 ms (it may ask the server), or throws after `timeout`.
    static func wait(_ what: String, timeout: Duration, until condition: () throws -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while try !condition() {
            guard ContinuousClock.now < deadline else {
                throw BenchError("timed out after \(timeout) waiting for \(what)")
            }
            usleep(5_000)
        }
    }

    /// The server's open event streams, from its `/metrics`.
    static func subscriberCount(_ client: HTTPConnection) throws -> Int {
        Int(try client.metric("navigation_values_subscribers"))
    }

    /// The server's dropped subscribers, from its `/metrics`.
    static func droppedSubscriberCount(_ client: HTTPConnection) throws -> Int {
        Int(try client.metric("navigation_values_subscribers_dropped_total"))
    }

    // MARK: - Printing

    /// `count` per second over `duration`, rounded.
    static func rate(_ count: Int, _ duration: Duration) -> String {
        String(format: "%.0f", Statistics.perSecond(count, duration))
    }
}
