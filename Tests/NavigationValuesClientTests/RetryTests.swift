import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

@testable import NavigationValuesClient

/// Retries are safe: an answer lost after the server committed is retried with the same
/// `Idempotency-Key` and applied once; a 503 is retried after its `Retry-After`.
@Suite struct RetryTests {
    /// Each kind of mutation, sent once through a relay that loses its first answer.
    enum Mutation: String, CaseIterable, Sendable {
        case create, push, pop, popTo, path, values, setHandler, removeHandler, publish, end
        case createStack, selectStack, removeStack, moveStack, pushOnto, popFrom, stackPath, present, dismiss
        case above, returnResult, batch, fork, importSession, createObserver

        var method: String {
            switch self {
            case .create, .push, .pop, .popTo, .publish, .createStack, .selectStack, .moveStack, .pushOnto, .popFrom,
                .present, .dismiss, .returnResult, .batch, .fork, .importSession, .createObserver:
                "POST"
            case .path, .setHandler, .stackPath, .above: "PUT"
            case .values: "PATCH"
            case .removeHandler, .end, .removeStack: "DELETE"
            }
        }

        /// Whether it makes a new session rather than an event of the session under test.
        var createsSession: Bool { [.create, .fork, .importSession].contains(self) }
    }

    @Test(arguments: Mutation.allCases)
    func anAnswerLostAfterTheCommitIsRetriedAndAppliedOnce(_ mutation: Mutation) async throws {
        try await withServer { direct, server in
            let proxy = try DroppingProxy(upstreamPort: server.port)
            defer { proxy.close() }
            let retries = RetryNoticeLog()
            let proxied = makeClient(loopbackURL(port: proxy.port)) { $0.onRetry = { retries.record($0) } }
            let setup = try await direct.createSession(root: ScreenSeed("Home"))
            try await setup.push("A")
            try await setup.root.setPreferenceHandler(named: "selection", passBack: true)
            let tab = StackID("tab")
            try await setup.createStack(tab, root: ScreenSeed("T"))
            try await setup.createStack(StackID("other"), root: ScreenSeed("O"))
            let sheet = try await setup.present(ScreenSeed("S"), from: .topOf(StackID("other"))).stack.id
            let sheetTop = try await setup.push(ScreenSeed("S2"), onto: sheet).screen.id
            let before = try await setup.get()
            let session = proxied.session(id: setup.id, token: setup.token)
            let sessionPath = "/v1/sessions/\(setup.id.rawValue)"

            switch mutation {
            case .create:
                proxy.dropAnswer(to: "POST /v1/sessions ")
                let created = try await proxied.createSession(root: ScreenSeed("Created"))
                #expect(try await created.get().screens.map(\.name) == ["Created"])
                let all = try await direct.sessions(limit: 100)
                #expect(all.sessions.count == 2, "one session created, not two")
            case .push:
                proxy.dropAnswer(to: "POST \(sessionPath)/push")
                let pushed = try await session.push("B")
                #expect(pushed.version == before.version + 1)
            case .pop:
                proxy.dropAnswer(to: "POST \(sessionPath)/pop")
                #expect(try await session.pop().popped == [before.screens[1].id])
            case .popTo:
                proxy.dropAnswer(to: "POST \(sessionPath)/pop")
                #expect(try await session.pop(to: .root).popped == [before.screens[1].id])
            case .path:
                proxy.dropAnswer(to: "PUT \(sessionPath)/path")
                #expect(try await session.replacePath([ScreenSeed("X")]).pushed.map(\.name) == ["X"])
            case .values:
                proxy.dropAnswer(to: "PATCH \(sessionPath)/screens/root/values")
                #expect(try await session.root.set(Counter.self, 1).version == before.version + 1)
            case .setHandler:
                proxy.dropAnswer(to: "PUT \(sessionPath)/screens/top/handlers/selection")
                #expect(
                    try await session.top.setPreferenceHandler(Selection.self, passBack: false).version == before
                        .version + 1)
            case .removeHandler:
                proxy.dropAnswer(to: "DELETE \(sessionPath)/screens/root/handlers/selection")
                #expect(try await session.root.removePreferenceHandler(Selection.self) == before.version + 1)
            case .publish:
                proxy.dropAnswer(to: "POST \(sessionPath)/screens/top/preferences/selection")
                let walk = try await session.top.updatePreference(Selection.self, value: "chosen")
                #expect(walk.deliveries == [PreferenceDelivery(screen: before.screens[0].id, value: "chosen")])
            case .end:
                proxy.dropAnswer(to: "DELETE \(sessionPath)")
                #expect(try await session.end() == before.version + 1)
            case .createStack:
                proxy.dropAnswer(to: "POST \(sessionPath)/stacks ")
                #expect(try await session.createStack(StackID("new")).stack.id == StackID("new"))
            case .selectStack:
                proxy.dropAnswer(to: "POST \(sessionPath)/select")
                #expect(try await session.selectStack(tab).selectedStack == tab)
            case .removeStack:
                proxy.dropAnswer(to: "DELETE \(sessionPath)/stacks/tab")
                #expect(try await session.removeStack(tab).screens.count == 1)
            case .moveStack:
                proxy.dropAnswer(to: "POST \(sessionPath)/stacks/other/move")
                #expect(try await session.moveStack(StackID("other"), to: 0).position == 0)
            case .pushOnto:
                proxy.dropAnswer(to: "POST \(sessionPath)/stacks/tab/push")
                #expect(try await session.push(ScreenSeed("T2"), onto: tab).screen.name == "T2")
            case .popFrom:
                proxy.dropAnswer(to: "POST \(sessionPath)/stacks/\(sheet.rawValue)/pop")
                #expect(try await session.pop(count: 1, from: sheet).popped.count == 1)
            case .stackPath:
                proxy.dropAnswer(to: "PUT \(sessionPath)/stacks/tab/path")
                #expect(try await session.replacePath([ScreenSeed("X")], of: tab).pushed.map(\.name) == ["X"])
            case .present:
                proxy.dropAnswer(to: "POST \(sessionPath)/present")
                #expect(try await session.present(ScreenSeed("Inner")).stack.presenter != nil)
            case .dismiss:
                proxy.dropAnswer(to: "POST \(sessionPath)/dismiss")
                #expect(try await session.dismiss(sheet).screens.count == 2)
            case .above:
                proxy.dropAnswer(to: "PUT \(sessionPath)/screens/root/above")
                #expect(try await session.replaceScreens(above: .root, with: [ScreenSeed("Y")]).pushed.count == 1)
            case .returnResult:
                proxy.dropAnswer(to: "POST \(sessionPath)/screens/\(sheetTop.rawValue)/return")
                let returned = try await session.screen(id: sheetTop).returnResult(Selection.self, value: "r")
                #expect(returned.popped.count == 1)
            case .batch:
                proxy.dropAnswer(to: "POST \(sessionPath)/batch")
                let batch = try await session.batch([.push(ScreenSeed("B1"), onto: tab), .selectStack(tab)])
                #expect(batch.results.count == 2)
            case .fork:
                proxy.dropAnswer(to: "POST /v1/sessions/fork")
                let fork = try await session.fork()
                #expect(try await fork.get().version == before.version)
                #expect(try await direct.sessions(limit: 100).sessions.count == 2, "one fork, not two")
            case .importSession:
                let export = try await setup.export()
                proxy.dropAnswer(to: "POST /v1/sessions/import")
                let imported = try await proxied.importSession(export.ndjson)
                #expect(try await imported.get().version == before.version)
                #expect(try await direct.sessions(limit: 100).sessions.count == 2, "one import, not two")
            case .createObserver:
                proxy.dropAnswer(to: "POST /v1/observers")
                let observer = try await session.createObserver(label: "once")
                #expect(try await direct.observers(of: setup.id).observers.map(\.id) == [observer.observer.id])
            }
            #expect(proxy.droppedCount == 1)
            let sent = proxy.requestLines.filter { $0.hasPrefix(mutation.method + " ") }
            #expect(sent.count == 2, "the first attempt and one retry: \(proxy.requestLines)")
            #expect(retries.notices.count == 1)
            #expect(retries.notices.first.map { if case .connection = $0.reason { true } else { false } } == true)
            if !mutation.createsSession, mutation != .createObserver {
                #expect(try await setup.get().version == before.version + 1, "applied once")
                #expect(try await setup.history(after: before.version).events.count == 1)
            }
        }
    }

    @Test(arguments: ServerKind.allCases) func aRepeatedKeyIsAppliedOnceOnEveryMutationMethod(server: ServerKind)
        async throws
    {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let first = try await session.root.setValues(["title": "x"], idempotencyKey: "k-values")
            let again = try await session.root.setValues(["title": "x"], idempotencyKey: "k-values")
            #expect(again == first)
            let handler = try await session.root.setPreferenceHandler(named: "s", passBack: true, idempotencyKey: "k-h")
            #expect(
                try await session.root.setPreferenceHandler(named: "s", passBack: true, idempotencyKey: "k-h")
                    == handler)
            let path = try await session.replacePath([ScreenSeed("A")], idempotencyKey: "k-path")
            #expect(try await session.replacePath([ScreenSeed("A")], idempotencyKey: "k-path") == path)
            // The same key with another body is another request (as before PUT and PATCH honoured keys).
            let other = try await session.root.setValues(["title": "y"], idempotencyKey: "k-values")
            #expect(other.version == path.version + 1)
            let removed = try await session.root.removePreferenceHandler(named: "s", idempotencyKey: "k-del")
            #expect(try await session.root.removePreferenceHandler(named: "s", idempotencyKey: "k-del") == removed)
            let ended = try await session.end(idempotencyKey: "k-end")
            #expect(try await session.end(idempotencyKey: "k-end") == ended)
            #expect(try await session.get().version == ended)
            #expect(try await session.history().events.count == Int(ended))
        }
    }

    @Test func aServerThatCannotCommitIsRetriedAfterItsRetryAfter() async throws {
        try await withServer { client, server in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let lock = try WriteLock(path: try #require(server.store as? SQLiteSessionStore).path)
            let retries = RetryNoticeLog()
            let patient = makeClient(client.baseURL) { configuration in
                configuration.onRetry = { notice in
                    retries.record(notice)
                    lock.release()  // the retry, after Retry-After, finds the database writable again
                }
            }
            let started = ContinuousClock.now
            let pushed = try await patient.session(id: session.id, token: session.token).push("A")
            let waited = ContinuousClock.now - started
            #expect(pushed.version == 2)
            #expect(retries.notices.count == 1)
            #expect(retries.notices.first?.reason == .status(503))
            #expect(retries.notices.first?.delay == .seconds(1), "Retry-After: 1")
            #expect(waited >= .seconds(1))
            #expect(try await session.get().screens.map(\.name) == ["Home", "A"])
            #expect(try await session.history(after: 1).events.count == 1)
        }
    }

    @Test func aRetryAfterLongerThanThePolicyAllowsFailsAtOnce() {
        let policy = RetryPolicy(maxRetryAfter: .seconds(10))
        #expect(policy.delay(after: 1, retryAfter: "3") == .seconds(3))
        #expect(policy.delay(after: 1, retryAfter: " 10 ") == .seconds(10))
        #expect(policy.delay(after: 1, retryAfter: "11") == nil)
        let fallback = policy.delay(after: 1, retryAfter: "Wed, 21 Oct 2026 07:28:00 GMT")
        #expect(fallback.map { $0 >= .milliseconds(50) && $0 <= .milliseconds(100) } == true)
        #expect(policy.delay(after: 1, retryAfter: nil, jitter: 0.5) == .milliseconds(75))
    }

    @Test func idempotencyKeysAreRandomAndURLSafe() {
        let keys = (0..<100).map { _ in IdempotencyKeyGenerator.random.next() }
        #expect(Set(keys).count == 100)
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect(
            keys.allSatisfy { $0.hasPrefix("k_") && $0.count == 24 && $0.dropFirst(2).allSatisfy(allowed.contains) })
    }

    @Test func backoffDoublesWithJitterUpToItsCeiling() {
        let policy = RetryPolicy(initialDelay: .milliseconds(100), maxDelay: .seconds(1))
        for _ in 0..<50 {
            let first = policy.backoff(after: 1)
            #expect(first >= .milliseconds(50) && first <= .milliseconds(100))
            let third = policy.backoff(after: 3)
            #expect(third >= .milliseconds(200) && third <= .milliseconds(400))
            let late = policy.backoff(after: 40)
            #expect(late >= .milliseconds(500) && late <= .seconds(1))
        }
        // The jitter's ends: half the exponential delay, and all of it.
        #expect(policy.backoff(after: 2, jitter: 0) == .milliseconds(100))
        #expect(policy.backoff(after: 2, jitter: 1) == .milliseconds(200))
        #expect(Set((0..<20).map { _ in policy.backoff(after: 2) }).count > 1, "random in between")
        #expect(RetryPolicy.never.maxAttempts == 1)
    }
}

/// Holds SQLite's write lock on a database file from another connection, on a thread of its own,
/// until released: the server's commits then fail (busy) and it answers 503 with `Retry-After`.
final class WriteLock: Sendable {
    private let released = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let isReleased = Mutex(false)

    init(path: String) throws {
        let locked = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        let thread = Thread { [released, done] in
            do {
                let database = try Database(path: path)
                try database.execute("BEGIN IMMEDIATE")
                locked.signal()
                released.wait()
                try database.execute("ROLLBACK")
            } catch {
                failure.withLock { $0 = error }
                locked.signal()
            }
            done.signal()
        }
        thread.start()
        locked.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }

    /// Lets the lock go (once) and waits until it is gone.
    func release() {
        guard
            isReleased.withLock({ flag in
                defer { flag = true }
                return !flag
            })
        else { return }
        released.signal()
        done.wait()
    }

    deinit {
        release()
    }
}
