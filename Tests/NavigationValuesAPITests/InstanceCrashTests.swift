import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesPostgres
import NavigationValuesStore
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

/// What writers were told through either instance, and whether instance A was killed.
final class TwoInstanceLedger: Sendable {
    struct Push: Sendable {
        var session: String
        var screen: String
        var name: String
        var version: Int64
    }
    private let pushes = Mutex<[Push]>([])
    private let killed = Atomic<Bool>(false)
    private let afterKill = Atomic<Int>(0)

    func record(_ push: Push) { pushes.withLock { $0.append(push) } }
    var all: [Push] { pushes.withLock { $0 } }
    var count: Int { pushes.withLock { $0.count } }

    /// True for the first caller only.
    func claimKill() -> Bool { !killed.exchange(true, ordering: .relaxed) }
    var isKilled: Bool { killed.load(ordering: .relaxed) }
    func acknowledgedAfterKill() { afterKill.add(1, ordering: .relaxed) }
    var countAfterKill: Int { afterKill.load(ordering: .relaxed) }
}

/// `kill -9` of one instance of two under load (docs/Operations.md, Faults): no acknowledged write is lost,
/// and the other instance keeps serving, its subscribers seeing every event in order.
@Suite(.needsPostgres) struct InstanceCrashTests {
    @Test func killingOneInstanceLosesNoAcknowledgedWriteAndTheOtherKeepsServing() async throws {
        try await PostgresTestServer.withDatabase { url in
            let instances = try await TwoInstances.start(url)
            do {
                try await killOneUnderLoad(instances, url: url)
            } catch {
                try? await instances.stop()
                throw error
            }
            try await instances.stop()
        }
    }

    private func killOneUnderLoad(_ instances: TwoInstances, url: String) async throws {
        var sessions: [TestSession] = []
        for _ in 0..<3 { sessions.append(try await TestSession.create(instances.clients[0])) }
        let subscribers = try sessions.map { session in
            try SSEClient(
                port: instances.clients[1].http.port, path: "/v1/sessions/\(session.id)/events?after=0",
                headers: ["Authorization": "Bearer \(session.token)"])
        }
        defer { for subscriber in subscribers { subscriber.close() } }
        for subscriber in subscribers { #expect(await subscriber.status() == 200) }

        // Six writers push in turn through A and B; the one whose ack takes the total past the
        // threshold kills A while the others have requests in flight on it. Each writer goes on
        // through B alone until it has had 10 acknowledgements after the kill.
        let ledger = TwoInstanceLedger()
        let threshold = 120
        let a = instances.processes[0]
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<6 {
                let target = sessions[writer % sessions.count]
                group.addTask {
                    var step = 0
                    var afterKill = 0
                    while afterKill < 10, step < 2_000 {
                        step += 1
                        let instance = ledger.isKilled ? 1 : step % 2
                        let session = instances.session(target, on: instance)
                        let name = "w\(writer)-\(step)"
                        guard let answer = try? await session.send("POST", "/push", json: ["name": .string(name)]),
                            answer.status == 201, let json = answer.json,
                            let screen = json["screen"]?["id"]?.stringValue, let version = json["version"]?.integerValue
                        else { continue }  // A is gone (or the write is unknown): go on with B
                        ledger.record(.init(session: target.id, screen: screen, name: name, version: version))
                        if ledger.isKilled, instance == 1 {
                            afterKill += 1
                            ledger.acknowledgedAfterKill()
                        }
                        if ledger.count >= threshold, ledger.claimKill() { a.kill() }
                    }
                }
            }
        }
        #expect(try await a.waitForExit() == .signalled(SIGKILL))
        #expect(ledger.countAfterKill >= 60, "B kept acknowledging writes after A died")

        // Every acknowledged push, through A or B, is in the session as B reads it.
        let b = instances.clients[1]
        var versions: [String: Int64] = [:]
        for target in sessions {
            let answer = try await b.send("GET", "/v1/sessions/\(target.id)", token: TwoInstances.admin)
            try #require(answer.status == 200)
            let json = try #require(answer.json)
            let version = try #require(json["version"]?.integerValue)
            versions[target.id] = version
            let names = Dictionary(
                (json["screens"]?.arrayValue ?? []).compactMap { screen in
                    screen["id"]?.stringValue.map { ($0, screen["name"]?.stringValue ?? "") }
                }, uniquingKeysWith: { first, _ in first })
            for push in ledger.all where push.session == target.id {
                #expect(names[push.screen] == push.name, "acknowledged push \(push.name) is kept")
                #expect(version >= push.version)
            }
        }
        // The log is gap-free and ends at the version each session reads as; B's subscribers
        // saw all of it, once each, in order, including what A wrote before it died.
        let store = try await PostgresSessionStore.open(url: url)
        for (target, subscriber) in zip(sessions, subscribers) {
            let expected = try #require(versions[target.id])
            let events = try await store.events(of: SessionID(target.id), after: 0, limit: 10_000)
            #expect(events.map(\.seq) == Array(1...expected))
            let frames = await subscriber.frames.events(Int(expected), timeout: .seconds(60))
            #expect(frames.compactMap { $0.id.flatMap { Int64($0) } } == Array(1...expected))
        }
        await store.close()
    }
}

/// A lost database connection (docs/Operations.md, Faults): 503 with `Retry-After` while it is down,
/// `/readyz` says so, and the server reconnects by itself.
@Suite(.needsPostgres) struct LostDatabaseConnectionTests {
    /// Ends every connection to the test's database, as a database restart or failover would.
    func dropConnections(_ url: String) async throws {
        try await PostgresTestServer.psql(
            url,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    }

    @Test func aLostConnectionAnswers503AndTheServerReconnectsByItself() async throws {
        try await PostgresTestServer.withDatabase { url in
            try await withRunningServer(configure: { $0.databasePath = url }) { client, server in
                #expect(server.store.isShared)
                let session = try await TestSession.create(client)
                #expect(try await client.send("GET", "/readyz").status == 200)

                try await dropConnections(url)
                // The 200 just above stands for up to a second (a write that worked is trusted that
                // long), so the 503 comes once it has lapsed and a probe meets the lost connection.
                var notReady: HTTPResponse?
                #expect(
                    try await eventually(timeout: .seconds(10), pollingEvery: .milliseconds(50)) {
                        notReady = try await client.send("GET", "/readyz")
                        return notReady?.status == 503
                    })
                let answer = try #require(notReady)
                expectProblem(answer, 503, type: "store-unavailable")
                #expect(answer.header("Retry-After") == "1")
                #expect(
                    try await eventually(timeout: .seconds(30), pollingEvery: .milliseconds(50)) {
                        try await client.send("GET", "/readyz").status == 200
                    })

                try await dropConnections(url)
                let refused = try await session.send("POST", "/push", json: ["name": "Lost"])
                expectProblem(refused, 503, type: "store-unavailable")
                #expect(refused.header("Retry-After") == "1")
                #expect(
                    try await eventually(timeout: .seconds(30), pollingEvery: .milliseconds(50)) {
                        try await session.send("POST", "/push", json: ["name": "Back"]).status == 201
                    })
                // The refused push left nothing; the session goes on from its stored version.
                let state = try await session.get()
                #expect(state.screenIDs.count == 2)
                #expect(state["version"] == .integer(2))
            }
        }
    }
}
