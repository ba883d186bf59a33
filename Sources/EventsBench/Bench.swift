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
    static let fanOutPushes = 200
    static let idleSubscribers = 10_000
    static let replayEvents = 20_000
    static let replayWriters = 8

    /// The phases to run, in order; all three when none is named.
    enum Phase: String, CaseIterable {
        case idle, fanout, replay
    }

    static let usage = "usage: events-bench [--event-loops N] [idle] [fanout] [replay]"
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
        say("load average at start: \(loadAverage())\n")

        for phase in phases {
            switch phase {
            case .idle: try await idle(in: folder)
            case .fanout: try await fanOut(in: folder)
            case .replay: try await replay(in: folder)
            }
        }
        say("\ntotal \(format(ContinuousClock.now - start)), load average at end: \(loadAverage())")
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
    static func createSession(_ client: RawHTTPClient) throws -> (id: String, token: String) {
        let reply = try client.send("POST", "/v1/sessions", json: #"{"root":{"name":"Home"}}"#)
        guard reply.status == 201, let json = reply.json, let id = json["id"]?.stringValue,
            let token = json["token"]?.stringValue
        else {
            throw BenchError(
                "POST /v1/sessions answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
        }
        return (id, token)
    }

    /// Waits for `condition`, polling every millisecond, or throws after `timeout`.
    static func wait(_ what: String, timeout: Duration, until condition: () -> Bool) throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else {
                throw BenchError("timed out after \(timeout) waiting for \(what)")
            }
            usleep(1_000)
        }
    }

    // MARK: - Printing

    /// The 1, 5 and 15 minute load averages (/proc/loadavg), or "unknown".
    static func loadAverage() -> String {
        guard let handle = FileHandle(forReadingAtPath: "/proc/loadavg") else { return "unknown" }
        defer { try? handle.close() }
        let fields = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")
        return fields.count >= 3 ? fields[0..<3].joined(separator: " ") : "unknown"
    }

    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    static func format(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 0.001 { return String(format: "%.2f ms", seconds * 1e3) }
        return String(format: "%.1f µs", seconds * 1e6)
    }

    static func milliseconds(_ nanoseconds: UInt64) -> String {
        String(format: "%.3f ms", Double(nanoseconds) / 1e6)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The value at quantile `q` (0...1) of sorted `values` (nearest rank).
    static func quantile(_ sorted: [UInt64], _ q: Double) -> UInt64 {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((q * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }

    /// `count` per second over `duration`, rounded.
    static func rate(_ count: Int, _ duration: Duration) -> String {
        String(format: "%.0f", Double(count) / max(seconds(duration), 1e-9))
    }

    static func mebibytes(_ kib: Int) -> String {
        String(format: "%.1f MiB", Double(kib) / 1024)
    }
}
