import Foundation
import NavigationValues
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import Synchronization
import TestSupport
import Testing

@testable import NavigationValuesSessions

/// The domain without HTTP: the service on a real SQLite file, answering typed results and typed
/// errors, and publishing typed events.
@Suite struct SessionServiceTests {
    /// A service on a SQLite file in a fresh temp folder, with the events it published.
    final class Fixture: Sendable {
        let service: SessionService
        let store: SQLiteSessionStore
        let log = EventLog()
        let folder: URL

        final class EventLog: Sendable {
            let events = Mutex<[RecordedEvent]>([])
        }

        init(snapshotInterval: Int = 64, limits: SessionLimits = SessionLimits()) async throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-sessions-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            store = try await SQLiteSessionStore.open(path: folder.appendingPathComponent("s.sqlite").path)
            var configuration = ServiceConfiguration()
            configuration.snapshotInterval = snapshotInterval
            configuration.limits = limits
            let log = self.log
            service = SessionService(
                store: store, configuration: configuration,
                eventCommitted: { _, event in log.events.withLock { $0.append(event) } })
        }

        func close() async {
            await store.close()
            try? FileManager.default.removeItem(at: folder)
        }

        func create(_ body: JSONValue = [:]) async throws -> CreatedSession {
            guard case .created(let created) = try await service.sessions.create(body: body, idempotency: nil) else {
                throw TestFailure("create replayed")
            }
            return created
        }

        func perform(_ command: SessionCommand, on session: CreatedSession, ifMatch: Int64? = nil) async throws
            -> MutationResult
        {
            let context = CommandContext(credential: .token(session.token), ifMatch: ifMatch)
            guard
                case .applied(let result, _) = try await service.sessions.perform(
                    command, on: session.session.id, context: context)
            else { throw TestFailure("command replayed") }
            return result
        }
    }

    final class Counter: Sendable {
        let count = Mutex(0)
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    private func withFixture(
        snapshotInterval: Int = 64, limits: SessionLimits = SessionLimits(), _ body: (Fixture) async throws -> Void
    ) async throws {
        let fixture = try await Fixture(snapshotInterval: snapshotInterval, limits: limits)
        do {
            try await body(fixture)
        } catch {
            await fixture.close()
            throw error
        }
        await fixture.close()
    }

    /// docs/SEMANTICS.md §2's worked example, checked on the typed answers and the typed events.
    @Test func forwardValuesWorkedExampleAsTypedResults() async throws {
        try await withFixture { fixture in
            let session = try await fixture.create([
                "root": ["name": "A"], "schema": ["values": ["title": ["type": "string", "default": ""]]],
            ])
            let a = session.session.screens[0].id
            guard
                case .pushed(let b, _) = try await fixture.perform(
                    .push(stack: "main", body: ["name": "B"]), on: session),
                case .pushed(let c, _) = try await fixture.perform(
                    .push(stack: "main", body: ["name": "C"]), on: session)
            else { throw TestFailure("push did not answer .pushed") }
            let first = try await fixture.perform(.patchValues(screen: "root", body: ["title": "x"]), on: session)
            #expect(
                first
                    == .valuesUpdated(
                        screen: try #require(try await screen(a, of: session, in: fixture)),
                        affected: [a, b.id, c.id].map { AffectedValue(screen: $0, key: "title", value: "x") },
                        version: 4))
            let second = try await fixture.perform(
                .patchValues(screen: b.id.rawValue, body: ["title": "y"]), on: session)
            guard case .valuesUpdated(_, let fromB, _) = second else { throw TestFailure("not .valuesUpdated") }
            #expect(fromB == [b.id, c.id].map { AffectedValue(screen: $0, key: "title", value: "y") })
            let third = try await fixture.perform(.patchValues(screen: "root", body: ["title": "z"]), on: session)
            guard case .valuesUpdated(_, let onlyA, _) = third else { throw TestFailure("not .valuesUpdated") }
            #expect(onlyA == [AffectedValue(screen: a, key: "title", value: "z")])
            let events = fixture.log.events.withLock { $0 }
            #expect(events.map(\.seq) == Array(1...6))
            #expect(
                events.map(\.event.kind) == [.sessionCreated, .screenPushed, .screenPushed]
                    + Array(repeating: .valuesUpdated, count: 3))
            #expect(
                events[3].event
                    == .valuesUpdated(screen: a, set: ["title": "x"], removed: [], affected: Self.affected(first)))
        }
    }

    private static func affected(_ result: MutationResult) -> [AffectedValue] {
        if case .valuesUpdated(_, let affected, _) = result { affected } else { [] }
    }

    private func screen(_ id: ScreenID, of session: CreatedSession, in fixture: Fixture) async throws -> ScreenResource?
    {
        guard
            case .screen(let screen, _) = try await fixture.service.sessions.read(
                .screen(id.rawValue), of: session.session.id, credential: .token(session.token))
        else { return nil }
        return screen
    }

    @Test func refusalsAreTypedErrorsWithTheirCodes() async throws {
        try await withFixture { fixture in
            let session = try await fixture.create()
            let other = try await fixture.create()
            let id = session.session.id
            let service = fixture.service
            func readError(_ query: SessionQuery, of id: SessionID, _ credential: Credential) async -> SessionError? {
                await Self.refusal { _ = try await service.sessions.read(query, of: id, credential: credential) }
            }
            let missing = await readError(.session, of: id, .none)
            let malformed = await readError(.session, of: id, .token("t_x"))
            let foreign = await readError(.session, of: id, .token(other.token))
            let unknownSession = await readError(.session, of: SessionID("s_none"), .admin)
            let unknownScreen = await readError(.screen("c_none"), of: id, .admin)
            #expect(missing?.code == .unauthorized && malformed?.code == .unauthorized)
            #expect(foreign?.code == .forbidden)
            #expect(unknownSession?.code == .notFound && unknownScreen?.code == .notFound)
            let popRoot = await Self.refusal {
                _ = try await fixture.perform(.pop(stack: "main", body: [:]), on: session)
            }
            #expect(popRoot?.code == .conflict)
            let invalid = await Self.refusal {
                _ = try await fixture.perform(.push(stack: "main", body: ["name": 5, "extra": 1]), on: session)
            }
            #expect(invalid?.code == .invalid && invalid?.fieldErrors.map(\.pointer) == ["/extra"])
            let stale = await Self.refusal {
                _ = try await fixture.perform(.push(stack: "main", body: [:]), on: session, ifMatch: 7)
            }
            #expect(stale?.code == .versionMismatch && stale?.currentVersion == 1)
            _ = try await fixture.perform(.end(purge: false), on: session)
            let ended = await Self.refusal {
                _ = try await fixture.perform(.push(stack: "main", body: [:]), on: session)
            }
            #expect(ended?.code == .gone)
        }
    }

    /// The `SessionError` that `body` throws; nil (and a recorded issue for any other error) otherwise.
    static func refusal(_ body: () async throws -> Void) async -> SessionError? {
        do {
            try await body()
            return nil
        } catch let error as SessionError {
            return error
        } catch {
            Issue.record("not a SessionError: \(error)")
            return nil
        }
    }

    /// With a way to answer in the context, the answer is rendered once: that one is what the
    /// outcome carries and what a retry replays, and its size is what the limit checks.
    @Test func anAnswerIsRenderedOnceForTheOutcomeTheRetryAndTheLimit() async throws {
        try await withFixture { fixture in
            let session = try await fixture.create()
            let renders = Counter()
            let answer: @Sendable (MutationResult) -> StoredAnswer = { result in
                renders.count.withLock { $0 += 1 }
                return StoredAnswer(status: 201, headers: ["ETag": "\"\(result.version)\""], body: Array("once".utf8))
            }
            let idempotency = Idempotency<MutationResult>(key: "k2", scope: "push \(session.session.id)") { _ in
                Issue.record("the idempotency record was rendered again")
                return StoredAnswer(status: 500, headers: [:], body: [])
            }
            let context = CommandContext(
                credential: .token(session.token), idempotency: idempotency, answer: answer)
            let first = try await fixture.service.sessions.perform(
                .push(stack: "main", body: ["name": "B"]), on: session.session.id, context: context)
            guard case .applied(.pushed(_, version: 2), let rendered) = first else {
                throw TestFailure("first push: \(first)")
            }
            #expect(rendered == StoredAnswer(status: 201, headers: ["ETag": "\"2\""], body: Array("once".utf8)))
            let again = try await fixture.service.sessions.perform(
                .push(stack: "main", body: ["name": "B"]), on: session.session.id, context: context)
            guard case .replayed(let replayed) = again else { throw TestFailure("retry applied again") }
            #expect(replayed == rendered)
            #expect(renders.count.withLock { $0 } == 1)
        }
    }

    @Test func anAnswerOverTheEventLimitIsRefusedOnItsRenderedBytes() async throws {
        try await withFixture { fixture in
            let session = try await fixture.create()
            // An answer far larger than what the result's JSON would be: the check sees these bytes.
            let limit = SessionLimits().maxEventBytes
            let context = CommandContext(credential: .token(session.token)) { result in
                StoredAnswer(status: 201, headers: [:], body: Array(repeating: 0x20, count: limit + 1))
            }
            let error = try await #require(throws: SessionError.self) {
                try await fixture.service.sessions.perform(
                    .push(stack: "main", body: ["name": "B"]), on: session.session.id, context: context)
            }
            #expect(error.limit == "max-event-bytes")
            // Nothing was kept: the session is still at version 1.
            guard
                case .session(let rendered) = try await fixture.service.sessions.read(
                    .session, of: session.session.id, credential: .admin)
            else { throw TestFailure("no session") }
            #expect(try SessionResource(json: JSONValue(parsing: rendered.json)).version == 1)
        }
    }

    /// Pushes check the session's limit on a bound grown push by push (OutputLimits); whatever
    /// mix of pushes and pops comes, no session is ever kept past the limit, and the push that
    /// is refused is one whose exact size would pass it.
    @Test func pushesCheckedOnTheGrownBoundNeverKeepASessionPastItsLimit() async throws {
        var limits = SessionLimits()
        limits.maxSessionBytes = 12_000
        try await withFixture(limits: limits) { fixture in
            let session = try await fixture.create()
            let id = session.session.id
            let context = CommandContext(credential: .token(session.token))
            func renderedBytes() async throws -> Int {
                guard
                    case .session(let rendered) = try await fixture.service.sessions.read(
                        .session, of: id, credential: .admin)
                else { throw TestFailure("no session") }
                return rendered.json.count
            }
            var refusals = 0
            var pushes = 0
            for step in 0..<400 {
                let command: SessionCommand =
                    step % 5 == 4
                    ? .pop(stack: "main", body: ["count": 1])
                    : .push(
                        stack: "main",
                        body: [
                            "name": .string("S\(step)"),
                            "values": .object(["v\(step % 3)": .string(String(repeating: "x", count: 90))]),
                        ])
                do {
                    _ = try await fixture.service.sessions.perform(command, on: id, context: context)
                    if case .push = command { pushes += 1 }
                } catch let error as SessionError where error.limit == "max-session-bytes" {
                    refusals += 1
                    // Refused on the exact figure: the same push, where nothing limits it, passes.
                    let before = try await renderedBytes()
                    #expect(before <= limits.maxSessionBytes)
                } catch let error as SessionError where error.code == .conflict {
                    continue  // a pop with nothing above the root
                }
                #expect(try await renderedBytes() <= limits.maxSessionBytes, "after step \(step)")
            }
            #expect(pushes > 20, "the limit left room for pushes")
            #expect(refusals > 10, "the walk reached the limit")
        }
    }

    @Test func anIdempotentRetryGetsTheKeptAnswerAndAppliesNothing() async throws {
        try await withFixture { fixture in
            let session = try await fixture.create()
            let recorded = Counter()
            let idempotency = Idempotency<MutationResult>(key: "k1", scope: "push \(session.session.id)") { result in
                recorded.count.withLock { $0 += 1 }
                return StoredAnswer(status: 201, headers: ["ETag": "\"\(result.version)\""], body: Array("kept".utf8))
            }
            let context = CommandContext(credential: .token(session.token), idempotency: idempotency)
            let first = try await fixture.service.sessions.perform(
                .push(stack: "main", body: ["name": "B"]), on: session.session.id, context: context)
            let again = try await fixture.service.sessions.perform(
                .push(stack: "main", body: ["name": "B"]), on: session.session.id, context: context)
            guard case .applied(.pushed(_, version: 2), _) = first else { throw TestFailure("first push: \(first)") }
            guard case .replayed(let answer) = again else { throw TestFailure("retry applied again") }
            #expect(answer == StoredAnswer(status: 201, headers: ["ETag": "\"2\""], body: Array("kept".utf8)))
            #expect(recorded.count.withLock { $0 } == 1)
            guard
                case .session(let rendered) = try await fixture.service.sessions.read(
                    .session, of: session.session.id, credential: .admin)
            else { throw TestFailure("no session") }
            let now = try SessionResource(json: JSONValue(parsing: rendered.json))
            #expect(now.version == 2 && now.screens.count == 2)
        }
    }

    /// A session's JSON is rendered once per version: reads at one version get the same bytes,
    /// and the first read after a mutation shows it (the rendering is never stale).
    @Test func readsAtOneVersionShareOneRenderingAndAMutationRendersAgain() async throws {
        try await withFixture { fixture in
            let session = try await fixture.create(["root": ["name": "Root"]])
            let id = session.session.id
            func read() async throws -> RenderedSession {
                guard
                    case .session(let rendered) = try await fixture.service.sessions.read(
                        .session, of: id, credential: .admin)
                else { throw TestFailure("no session") }
                return rendered
            }
            let first = try await read()
            let second = try await read()
            #expect(first.version == 1 && second.version == 1)
            #expect(first.json == second.json)
            first.json.withUnsafeBufferPointer { a in
                second.json.withUnsafeBufferPointer { b in #expect(a.baseAddress == b.baseAddress) }
            }
            _ = try await fixture.perform(
                .push(stack: "main", body: ["name": "Detail", "values": ["n": 1]]), on: session)
            let pushed = try await read()
            let decoded = try SessionResource(json: JSONValue(parsing: pushed.json))
            #expect(pushed.version == 2 && decoded.version == 2)
            #expect(decoded.screens.map(\.name) == ["Root", "Detail"])
            _ = try await fixture.perform(.patchValues(screen: "top", body: ["n": 2]), on: session)
            let patched = try SessionResource(json: JSONValue(parsing: try await read().json))
            #expect(patched.version == 3 && patched.screens.last?.values["n"] == 2)
            // Read again at that version: the kept rendering, the same session.
            #expect(try SessionResource(json: JSONValue(parsing: try await read().json)) == patched)
        }
    }

    /// Replay at every N of a random session equals what the service showed right after N, with
    /// snapshots every 3 events and with none.
    @Test(arguments: [0, 3])
    func replayAtEveryEventEqualsTheLiveSessionThen(snapshotInterval: Int) async throws {
        try await withFixture(snapshotInterval: snapshotInterval) { fixture in
            var random = SplitMix64(state: 11)
            let session = try await fixture.create(["root": ["name": "Root"]])
            var shown: [Int64: SessionResource] = [:]
            for _ in 0..<40 {
                let read = try await fixture.service.sessions.read(.session, of: session.session.id, credential: .admin)
                guard case .session(let rendered) = read else { throw TestFailure("no session") }
                let current = try SessionResource(json: JSONValue(parsing: rendered.json))
                #expect(rendered.version == current.version)
                shown[current.version] = current
                let depth = current.screens.count
                let top = current.screens[depth - 1].id.rawValue
                let command: SessionCommand
                switch random.next() % 6 {
                case 0:
                    command = .push(
                        stack: "main", body: ["name": "S", "values": ["n": .integer(Int64(random.next() % 5))]])
                case 1: command = depth > 1 ? .pop(stack: "main", body: [:]) : .push(stack: "main", body: [:])
                case 2:
                    command = .patchValues(screen: top, body: ["n": .integer(Int64(random.next() % 5)), "m": .null])
                case 3:
                    command = .setHandler(screen: "root", key: "p", body: ["passBack": .bool(random.next() % 2 == 0)])
                case 4: command = .publish(screen: top, key: "p", body: ["value": .integer(Int64(random.next() % 3))])
                default: command = .replacePath(stack: "main", body: ["screens": [["name": "X"], ["name": "Y"]]])
                }
                _ = try await fixture.perform(command, on: session)
            }
            for (version, expected) in shown {
                let replayed = try await SessionReplay.session(session.session.id, at: version, in: fixture.store)
                #expect(replayed == expected, "at \(version)")
            }
        }
    }

    /// A tab moved among the tabs (docs/Stacks.md): only the tabs it shifts are stored with
    /// another position (the positions the tabs held, handed out in their new order), and the
    /// session loaded again from its rows, where the moved tab now comes after the sheet one of
    /// its screens presents, has the same order.
    @Test func aMoveStoresThePositionsOfTheTabsItShiftsAndLoadsInTheSameOrder() async throws {
        try await withFixture { fixture in
            let session = try await fixture.create()
            let id = session.session.id
            for tab in ["a", "b"] { _ = try await fixture.perform(.createStack(["id": .string(tab)]), on: session) }
            guard
                case .stackPresented(let sheet, _) = try await fixture.perform(
                    .present(["from": "b:root"]), on: session)
            else { throw TestFailure("present did not answer .stackPresented") }
            for tab in ["c", "d"] { _ = try await fixture.perform(.createStack(["id": .string(tab)]), on: session) }
            func positions() async throws -> [StackID: Int] {
                let stored = try #require(try await fixture.store.loadSession(id))
                return Dictionary(uniqueKeysWithValues: stored.stacks.map { ($0.id, $0.position) })
            }
            let before = try await positions()
            let moved = try await fixture.perform(.moveStack(stack: "b", body: ["position": 3]), on: session)
            #expect(moved == .stackMoved(stack: StackID("b"), position: 3, version: 7))
            let after = try await positions()
            #expect(after[StackID("a")] == before[StackID("a")] && after[sheet.id] == before[sheet.id])
            #expect(after[StackID("c")] == before[StackID("b")] && after[StackID("d")] == before[StackID("c")])
            #expect(after[StackID("b")] == before[StackID("d")])
            #expect(try #require(after[StackID("b")]) > (try #require(after[sheet.id])))

            func order() async throws -> [StackID] {
                guard
                    case .stacks(let list) = try await fixture.service.sessions.read(
                        .stacks, of: id, credential: .admin)
                else {
                    throw TestFailure("no stacks")
                }
                return list.stacks.map(\.id)
            }
            let expected = [.main, StackID("a"), StackID("c"), StackID("d"), StackID("b"), sheet.id]
            #expect(try await order() == expected)
            fixture.service.sessions.unload(id)
            #expect(!fixture.service.sessions.isLoaded(id))
            #expect(try await order() == expected)
            let replayed = try await SessionReplay.session(id, at: 7, in: fixture.store)
            #expect(replayed.stacks.map(\.id) == Array(expected.dropFirst()))
        }
    }
}
