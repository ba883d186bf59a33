import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesPostgres
import NavigationValuesStore
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

extension Trait where Self == ConditionTrait {
    /// Runs the test only where a PostgreSQL server can be had; says why it did not run otherwise.
    static var needsPostgres: Self {
        .enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.unavailableReason))
    }
}

/// Two `api-crash-server` processes on one PostgreSQL database, each with a client.
struct TwoInstances: Sendable {
    let processes: [ChildProcess]
    let clients: [TestClient]
    static let admin = "multi-admin"

    static func start(_ url: String) async throws -> TwoInstances {
        var processes: [ChildProcess] = []
        var clients: [TestClient] = []
        for _ in 0..<2 {
            let process = try crashServer(database: url, adminToken: admin)
            processes.append(process)
            clients.append(try TestClient(baseURL: try await process.listeningURL(), adminToken: admin))
        }
        return TwoInstances(processes: processes, clients: clients)
    }

    func stop() async throws {
        for process in processes where process.isRunning {
            process.signal(SIGTERM)
            _ = try await process.waitForExit()
        }
    }

    /// `session` as seen through instance `index`.
    func session(_ session: TestSession, on index: Int) -> TestSession {
        TestSession(client: clients[index], id: session.id, token: session.token, created: session.created)
    }
}

/// The versions acknowledged per session, recorded by concurrent writers.
final class Versions: Sendable {
    private let versions = Mutex<[String: [Int64]]>([:])
    func record(_ version: Int64, of session: String) { versions.withLock { $0[session, default: []].append(version) } }
    var all: [String: [Int64]] { versions.withLock { $0 } }
}

/// Several instances, one truth: writes through either instance are linearized by the
/// database, every subscriber sees every event once and in order whichever instance it is on,
/// and If-Match and idempotency keys hold across instances.
@Suite(.needsPostgres) struct MultiInstanceTests {
    @Test func writersAlternatingInstancesAreLinearizedAndEverySubscriberSeesEveryEventOnceInOrder() async throws {
        try await PostgresTestServer.withDatabase { url in
            let instances = try await TwoInstances.start(url)
            do {
                try await alternatingWriters(instances)
            } catch {
                try? await instances.stop()
                throw error
            }
            try await instances.stop()
        }
    }

    private func alternatingWriters(_ instances: TwoInstances) async throws {
        var sessions: [TestSession] = []
        for index in 0..<3 { sessions.append(try await TestSession.create(instances.clients[index % 2])) }
        // Subscribers on both instances, from the first event; and the admin stream on B.
        var streams: [(session: String, instance: Int, client: SSEClient)] = []
        for session in sessions {
            for instance in 0..<2 {
                let stream = try SSEClient(
                    port: instances.clients[instance].http.port, path: "/v1/sessions/\(session.id)/events?after=0",
                    headers: ["Authorization": "Bearer \(session.token)"])
                streams.append((session.id, instance, stream))
            }
        }
        defer { for stream in streams { stream.client.close() } }
        for stream in streams { #expect(await stream.client.status() == 200) }
        let adminStream = try SSEClient(
            port: instances.clients[1].http.port, path: "/v1/events",
            headers: ["Authorization": "Bearer \(TwoInstances.admin)"])
        defer { adminStream.close() }
        #expect(await adminStream.status() == 200)

        // Two writers per session, each sending its requests to A and B in turn.
        let steps = 16
        let acknowledged = Versions()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, session) in sessions.enumerated() {
                for writer in 0..<2 {
                    group.addTask {
                        for step in 0..<steps {
                            let target = instances.session(session, on: (step + writer + index) % 2)
                            let answer: HTTPResponse
                            if step.isMultiple(of: 2) {
                                answer = try await target.send(
                                    "PATCH", "/screens/root/values", json: ["w\(writer)": .integer(Int64(step))])
                            } else {
                                answer = try await target.send(
                                    "POST", "/push", json: ["name": .string("w\(writer)-\(step)")])
                            }
                            try #require(
                                answer.status == 200 || answer.status == 201,
                                "\(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
                            let version = try #require(answer.json?["version"]?.integerValue)
                            acknowledged.record(version, of: session.id)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let acks = acknowledged.all
        let last = Int64(1 + 2 * steps)
        for session in sessions {
            // Every write applied once: the versions acknowledged are 2…last, each once.
            #expect(acks[session.id]?.sorted() == Array(2...last), "session \(session.id)")
            for instance in 0..<2 {
                let state = try await instances.session(session, on: instance).get()
                #expect(state["version"] == .integer(last), "instance \(instance) reads the latest version")
                #expect(state["screens"]?.arrayValue?.count == 1 + steps)
            }
        }
        // Every subscriber, on either instance, saw events 1…last of its session, once each, in order.
        for stream in streams {
            let frames = await stream.client.frames.events(Int(last), timeout: .seconds(60))
            #expect(
                frames.compactMap { $0.id.flatMap { Int64($0) } } == Array(1...last),
                "session \(stream.session) on instance \(stream.instance)")
        }
        // The admin stream on B carried the writes made through A too (live from when it opened).
        let tagged = await adminStream.frames.events(sessions.count * 2 * steps, timeout: .seconds(60))
        for session in sessions {
            let seqs = tagged.filter { ($0.data ?? "").contains("\"session\":\"\(session.id)\"") }.compactMap {
                $0.id.flatMap { Int64($0) }
            }
            #expect(Set(seqs) == Set(2...last), "admin stream, session \(session.id)")
        }
        // The list of sessions on either instance covers every session.
        for client in instances.clients {
            let list = try await client.send("GET", "/v1/sessions", token: TwoInstances.admin)
            let ids = Set(list.json?["sessions"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [])
            #expect(ids == Set(sessions.map(\.id)))
        }
        // Resuming by id works on the other instance.
        let resumed = try SSEClient(
            port: instances.clients[0].http.port, path: "/v1/sessions/\(sessions[1].id)/events",
            headers: ["Authorization": "Bearer \(sessions[1].token)", "Last-Event-ID": "\(last - 3)"])
        defer { resumed.close() }
        let tail = await resumed.frames.events(3, timeout: .seconds(30))
        #expect(tail.compactMap { $0.id.flatMap { Int64($0) } } == Array((last - 2)...last))
    }

    @Test func ifMatchAndIdempotencyKeysHoldAcrossInstances() async throws {
        try await PostgresTestServer.withDatabase { url in
            let instances = try await TwoInstances.start(url)
            do {
                let created = try await TestSession.create(instances.clients[0])
                let onA = instances.session(created, on: 0)
                let onB = instances.session(created, on: 1)
                _ = try await onB.get()  // B loads the session at version 1
                // A moves it on; B is asked with the version A answered, and must not refuse it.
                let pushed = try await onA.send("POST", "/push", json: ["name": "Detail"])
                #expect(pushed.header("ETag") == "\"2\"")
                let patched = try await onB.send(
                    "PATCH", "/screens/top/values", json: ["k": 1], headers: ["If-Match": "\"2\""])
                #expect(patched.status == 200, "\(String(decoding: patched.body, as: UTF8.self))")
                #expect(patched.header("ETag") == "\"3\"")
                // A's copy is at 2 now; the stale If-Match is refused there with the current version.
                let stale = try await onA.send(
                    "PATCH", "/screens/top/values", json: ["k": 2], headers: ["If-Match": "\"2\""])
                expectProblem(stale, 412, type: "precondition-failed")
                #expect(stale.header("ETag") == "\"3\"")
                // An idempotent push through A, retried through B: the first answer, applied once.
                let key = ["Idempotency-Key": "push-\(UUID().uuidString)"]
                let first = try await onA.send("POST", "/push", json: ["name": "Once"], headers: key)
                #expect(first.status == 201)
                let retry = try await onB.send("POST", "/push", json: ["name": "Once"], headers: key)
                #expect(retry.status == 201)
                #expect(retry.body == first.body)
                #expect(retry.header("Idempotent-Replayed") == "true")
                let state = try await onB.get()
                #expect(state["version"] == .integer(4))
                #expect(state.screenIDs.count == 3)
                // A purge through B: A's copy answers 404 at once, its history 410.
                let purged = try await onB.send("DELETE", "?purge=true")
                #expect(purged.status == 204)
                expectProblem(try await onA.send("GET"), 404, type: "not-found")
                expectProblem(try await onA.send("GET", "/history"), 410, type: "gone")
            } catch {
                try? await instances.stop()
                throw error
            }
            try await instances.stop()
        }
    }
}

/// An instance that hears nothing from the others (its listener off) still answers from the
/// current state: reads check the stored version, and a command on a stale copy is refused by the
/// database (a conditional commit), reloaded and run again, once.
@Suite(.needsPostgres) struct StaleInstanceTests {
    @Test func aStaleCopyIsReloadedAndTheCommandRunsAgainOnce() async throws {
        try await PostgresTestServer.withDatabase { url in
            try await withRunningServer(configure: { $0.databasePath = url }) { a, _ in
                try await withRunningServer(
                    configure: {
                        $0.databasePath = url
                        $0.postgres.listens = false
                    }
                ) { b, instanceB in
                    let created = try await TestSession.create(a)
                    let onA = created
                    let onB = TestSession(client: b, id: created.id, token: created.token, created: created.created)
                    #expect(try await onB.get()["version"] == 1)  // B loads version 1

                    // A read through B sees A's write at once, without any notice.
                    try await onA.push("Detail")
                    #expect(try await onB.get().screenIDs.count == 2)

                    // B's copy is stale again; its push is a conflict in the database, reloaded, run again.
                    try await onA.push("More")
                    let before = instanceB.store.metrics
                    let pushed = try await onB.send("POST", "/push", json: ["name": "FromB"])
                    #expect(pushed.status == 201)
                    #expect(pushed.json?["version"] == .integer(4))
                    let after = instanceB.store.metrics
                    #expect(after.failedMutations == before.failedMutations + 1, "one conditional commit refused")
                    #expect(after.committedMutations == before.committedMutations + 1, "applied once")

                    // A refusal judged on a stale copy is checked before it is answered: A pushes,
                    // B is told If-Match the version A answered, and B's copy still has the old one.
                    let third = try await onA.send("POST", "/push", json: ["name": "Third"])
                    let version = try #require(third.json?["version"]?.integerValue)
                    let patched = try await onB.send(
                        "PATCH", "/screens/top/values", json: ["k": 1], headers: ["If-Match": "\"\(version)\""])
                    #expect(patched.status == 200, "\(String(decoding: patched.body, as: UTF8.self))")
                    #expect(patched.json?["screen"]?["name"] == "Third")

                    // Every write is in the log once, in order.
                    let events = try await instanceB.store.events(of: SessionID(created.id), after: 0, limit: 100)
                    #expect(events.map(\.seq) == Array(1...6))
                    #expect(
                        events.map(\.type) == [
                            "session.created", "screen.pushed", "screen.pushed", "screen.pushed", "screen.pushed",
                            "values.updated",
                        ])
                }
            }
        }
    }
}
