import BenchmarkSupport
import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSQLite
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

extension Bench {
    /// A session of 20,000 value updates, rebuilt from the file with `SessionReplay`: with the
    /// default snapshot interval (at the latest event, and just before a snapshot), and from
    /// event 1 on a server that never snapshots.
    static func replay(in folder: URL) async throws {
        let interval = ServiceConfiguration().snapshotInterval
        say("\n== Replay speed: one session, \(replayEvents) PATCH values events, rebuilt from the file ==")
        let snapshotted = folder.appendingPathComponent("replay-\(interval).sqlite").path
        let (id, latest) = try await withServer(snapshotted) { server in try write(to: server) }
        // Latest: the newest snapshot at or before it, then the events after it.
        let latestSnapshot = latest / Int64(interval) * Int64(interval)
        try await time(
            "snapshot interval \(interval), at latest \(latest)", id, at: latest, applied: latest - latestSnapshot,
            path: snapshotted, runs: 7)
        // Just before a boundary: the most events replay ever applies with this interval.
        let boundary = latestSnapshot - 1
        let worst = try await time(
            "snapshot interval \(interval), at \(boundary) (just before a snapshot)", id, at: boundary,
            applied: boundary - (latestSnapshot - Int64(interval)), path: snapshotted, runs: 7)
        thresholds.check(
            "maxReplayJustBeforeSnapshotMilliseconds", Statistics.seconds(worst) * 1e3,
            "    replay just before a snapshot, from the file", unit: "ms", decimals: 2)

        let unsnapshotted = folder.appendingPathComponent("replay-0.sqlite").path
        let (plainID, plainLatest) = try await withServer(unsnapshotted, snapshotInterval: 0) { server in
            try write(to: server)
        }
        let plainApplied = plainLatest - 1
        let plain = try await time(
            "snapshot interval 0, at latest \(plainLatest) (from event 1)", plainID, at: plainLatest,
            applied: plainApplied, path: unsnapshotted, runs: 3)
        thresholds.check(
            "minReplayEventsAppliedPerSecond", Statistics.perSecond(Int(plainApplied), plain),
            "    replay without snapshots, from the file", unit: "events applied/s", decimals: 0)
    }

    /// Writes `replayEvents` PATCHes to one new session from `replayWriters` threads, each on its
    /// own keep-alive connection; returns the session and its latest event.
    private static func write(to server: NavigationValuesServer) throws -> (SessionID, Int64) {
        let client = try HTTPConnection(port: server.port)
        let session = try createSession(client)
        let failures = FailureList()
        let done = DispatchSemaphore(value: 0)
        let perWriter = replayEvents / replayWriters
        let port = server.port
        let start = ContinuousClock.now
        for writer in 0..<replayWriters {
            let thread = Thread {
                defer { done.signal() }
                do {
                    let connection = try HTTPConnection(port: port)
                    for step in 0..<perWriter {
                        let n = writer * perWriter + step
                        let reply = try connection.send(
                            "PATCH", "/v1/sessions/\(session.id)/screens/root/values", token: session.token,
                            json: #"{"counter":\#(n),"title":"write \#(n)","writer\#(writer)":\#(step)}"#)
                        guard reply.status == 200 else {
                            throw BenchError(
                                "PATCH answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
                        }
                    }
                } catch {
                    failures.add("writer \(writer): \(error)")
                }
            }
            thread.start()
        }
        for _ in 0..<replayWriters {
            guard done.wait(timeout: .now() + 120) == .success else {
                throw BenchError("writers still busy after 120 s")
            }
        }
        if let failure = failures.first { throw BenchError(failure) }
        let elapsed = ContinuousClock.now - start
        let written = perWriter * replayWriters
        say(
            "  wrote \(written) events from \(replayWriters) keep-alive connections in \(Statistics.format(elapsed)) (\(rate(written, elapsed)) events/s)"
        )
        return (SessionID(session.id), Int64(written) + 1)
    }

    /// Replays `id` at `at` from the file `runs` times; prints the median and the best, and
    /// returns the median.
    @discardableResult
    private static func time(
        _ label: String, _ id: SessionID, at: Int64, applied: Int64, path: String, runs: Int
    ) async throws -> Duration {
        var durations: [Duration] = []
        var version: Int64?
        for _ in 0..<runs {
            let start = ContinuousClock.now
            let session = try await SessionReplay.session(id, at: at, databasePath: path)
            durations.append(ContinuousClock.now - start)
            version = session.version
        }
        guard version == at else {
            throw BenchError("replay at \(at) came back at version \(version.map(String.init) ?? "none")")
        }
        // The same replay on an already-open store: the rebuild alone, without opening the file.
        var configuration = SQLiteSessionStore.Configuration()
        configuration.access = .readOnly
        let store = try await SQLiteSessionStore.open(path: path, configuration: configuration)
        var openDurations: [Duration] = []
        do {
            for _ in 0..<runs {
                let start = ContinuousClock.now
                _ = try await SessionReplay.session(id, at: at, in: store)
                openDurations.append(ContinuousClock.now - start)
            }
            await store.close()
        } catch {
            await store.close()
            throw error
        }
        let median = durations.sorted()[runs / 2]
        let openMedian = openDurations.sorted()[runs / 2]
        say("  \(label): \(applied) events applied after the starting point")
        say(
            "    from the file: median \(Statistics.format(median)) (best \(Statistics.format(durations.min() ?? median))) of \(runs) runs"
                + " = \(rate(Int(at), median)) events rebuilt/s (state after \(at) events), \(rate(Int(applied), median)) events applied/s"
        )
        say(
            "    on an open store: median \(Statistics.format(openMedian)) = \(rate(Int(applied), openMedian)) events applied/s"
        )
        return median
    }
}

/// Writer threads' failures.
private final class FailureList: Sendable {
    private let list = Mutex<[String]>([])

    func add(_ failure: String) { list.withLock { $0.append(failure) } }
    var first: String? { list.withLock { $0.first } }
}
