import Foundation
import NavigationValues
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesSessions

/// Sessions outside the hot set kept in their compact form (`DormantSession`): the round trip
/// full → compact → full gives back the same session (what it renders, explains and stores,
/// and what every later change does to it), and the service answers a dormant session exactly
/// as a hot one, from memory.
@Suite struct DormantSessionTests {
    static let schema: SessionSchema = {
        let json: JSONValue = [
            "values": [
                "title": ["type": "string", "default": "untitled"],
                "count": ["type": "integer", "default": 0],
            ]
        ]
        return (try? SessionSchema(json: json)) ?? .empty
    }()

    /// A session built as requests build one, with tabs, presentations, values, handlers and
    /// their memory, received preferences, a selection and stacks removed (so that the next
    /// stack's position is not the one its rows would give back).
    static func randomSession(seed number: UInt64, schema: SessionSchema) throws -> LiveSession {
        var random = SplitMix64(state: number)
        let at = Date(millisecondsSince1970: 1_700_000_000_123)
        let record = SessionRecord(
            id: SessionID("s_dormant\(number)"), version: 1, state: .active, schemaJSON: "",
            tokenHash: TokenHasher.hash("t_token\(number)"), createdAt: at, updatedAt: at,
            origin: number % 2 == 0 ? SessionOrigin(session: SessionID("s_origin"), version: 7) : nil,
            compactedSeq: Int64(number % 3))
        let session = LiveSession(record: record, schema: schema)
        var next = 0
        func seed(_ values: [String: JSONValue]) -> ScreenSeed {
            next += 1
            return ScreenSeed(id: ScreenID("c_\(next)"), name: "Screen \"\(next)\" é\n", values: values)
        }
        try session.pushScreen(seed(["title": "root", "count": 1]))
        var seq: Int64 = 1
        func apply(_ operation: SessionOperation) throws {
            seq += 1
            _ = try session.apply(operation, seq: seq, at: at.addingTimeInterval(Double(seq)))
        }
        let keys = ["title", "count", "draft", "k.1", "é"]
        var stacks = 0
        for _ in 0..<40 {
            let tree = session.tree
            let stackIDs = tree.stackIDs
            let stackID = stackIDs[Int.random(in: 0..<stackIDs.count, using: &random)]
            let entries = tree.stack(stackID)?.entries ?? []
            guard let target = entries.randomElement(using: &random)?.id else { continue }
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            let value = JSONValueSizeTests.randomValue(depth: 0, using: &random)
            let isCovered = tree.stack(stackID)?.isCoveredByPresentation ?? true
            switch Int.random(in: 0..<13, using: &random) {
            case 0 where !isCovered, 1 where !isCovered: try apply(.push(stackID, seed([key: value, "n": .integer(Int64(next))])))
            case 2 where entries.count > 1: try apply(.pop(stackID, [entries[entries.count - 1].id]))
            case 3: try apply(.setHandler(screen: target, key: key, passBack: Bool.random(using: &random)))
            case 4: try apply(.updateValues(screen: target, set: [key: value], removed: []))
            case 5: try apply(.updateValues(screen: target, set: [:], removed: [key]))
            case 6:
                stacks += 1
                try apply(.createStack(StackID("tab\(stacks)"), root: seed(["title": .string("tab\(stacks)")])))
            case 7 where !isCovered:
                stacks += 1
                let style: PresentationStyle = Bool.random(using: &random) ? .sheet : .fullScreenCover
                let top = try #require(entries.last?.id)
                try apply(.present(StackID("p\(stacks)"), style: style, presenter: top, root: seed([key: value])))
            case 8 where tree.kind(of: stackID) == .tab || stackID == .main: try apply(.selectStack(stackID))
            case 9 where tree.kind(of: stackID) == .tab: try apply(.removeStack(stackID))
            case 10 where tree.kind(of: stackID) == .tab:
                try apply(.moveStack(stackID, position: Int.random(in: 0..<(tree.tabIDs.count - 1), using: &random)))
            case 11 where tree.presenter(of: stackID) != nil: try apply(.dismiss(stackID))
            case 12: try apply(.publish(screen: target, key: key, value: value))
            default: try apply(.updateValues(screen: target, set: ["title": .string("v\(seq)")], removed: []))
            }
        }
        return session
    }

    /// Everything of a session a request can see or a later change depends on, as text.
    /// With `explaining`, what `?explain` shows too (not when the original keeps a walk, which the
    /// stored form does not: `hasStateBeyondItsRows`).
    static func portrait(_ session: LiveSession, explaining: Bool) throws -> [String] {
        var lines = [
            session.resource(includeMemory: true).json.serialized(),
            session.stackList().json.serialized(),
            "\(session.record)",
            "tabs \(session.tabPositions.sorted { $0.key.rawValue < $1.key.rawValue })",
            "next \(session.nextStackPosition)",
            "token \(session.tokenDigest?.hex ?? "none")",
            "schema \(session.schema.json.serialized())",
            "footprint \(SessionFootprint(session).sessionBytes)",
        ]
        if explaining {
            lines.append(try OutputLimits(limits: SessionLimits()).explained(session).json.serialized())
        }
        return lines
    }

    @Test(arguments: 1...24)
    func theRoundTripGivesBackTheSameSessionAndItChangesAlike(seed: Int) throws {
        for schema in [Self.schema, .empty] {
            let session = try Self.randomSession(seed: UInt64(seed), schema: schema)
            let dormant = DormantSession(session)
            let rebuilt = try dormant.session(id: session.id)
            try Self.expectSame(rebuilt, session)
            #expect(dormant.version == session.record.version)
            #expect(rebuilt.tokenDigest?.matches(TokenDigest(of: "t_token\(seed)")) == true)
            #expect(rebuilt.tokenDigest?.matches(TokenDigest(of: "t_other")) == false)
            // The same changes, on both, from here: the same events, rows and sessions.
            var seq = session.record.version
            let at = Date(millisecondsSince1970: 1_800_000_000_000)
            let top = try #require(session.tree.visibleStack.lastEntry?.id)
            let root = try #require(session.stack.firstEntry?.id)
            let operations: [SessionOperation] = [
                .push(session.tree.visibleStackID, ScreenSeed(id: ScreenID("c_more"), name: "More", values: ["k.1": 5])),
                .setHandler(screen: root, key: "draft", passBack: true),
                .publish(screen: ScreenID("c_more"), key: "draft", value: ["text": "hello"]),
                .publish(screen: top, key: "é", value: 3),
                .updateValues(screen: root, set: ["count": 9], removed: ["title"]),
                .createStack(StackID("later"), root: ScreenSeed(id: ScreenID("c_later"), name: "Later", values: [:])),
                .pop(session.tree.visibleStackID, [ScreenID("c_more")]),
            ]
            for operation in operations {
                seq += 1
                let expected = try session.apply(operation, seq: seq, at: at)
                let applied = try rebuilt.apply(operation, seq: seq, at: at)
                #expect(applied.event.json.serialized() == expected.event.json.serialized())
                #expect(applied.changes == expected.changes)
            }
            try Self.expectSame(rebuilt, session)
        }
    }

    /// Each line of the two portraits alike (the first that differs is shown).
    static func expectSame(_ rebuilt: LiveSession, _ session: LiveSession) throws {
        let explaining = !session.hasStateBeyondItsRows
        let (got, expected) = (try portrait(rebuilt, explaining: explaining), try portrait(session, explaining: explaining))
        #expect(got.count == expected.count)
        for (line, wanted) in zip(got, expected) where line != wanted {
            #expect(line == wanted)
            return
        }
    }

    /// The random sessions of the round trip have what it is meant to cover.
    @Test func theRandomSessionsHaveEveryKindOfStack() throws {
        var kinds: Set<StackKind> = []
        var removed = 0
        var handlersWithMemory = 0
        for seed in 1...24 {
            let session = try Self.randomSession(seed: UInt64(seed), schema: .empty)
            for id in session.tree.stackIDs { kinds.insert(session.tree.kind(of: id) ?? .main) }
            if session.nextStackPosition > session.tree.stackIDs.count { removed += 1 }
            if session.resource(includeMemory: true).json.serialized().contains("\"lastReceived\"") {
                handlersWithMemory += 1
            }
        }
        #expect(kinds == [.main, .tab, .sheet, .fullScreenCover])
        #expect(removed > 0 && handlersWithMemory > 0)
    }

    /// A preference's walk made in this process is not in the stored form: a session holding
    /// one says so (and its actor keeps it hot); once loaded from its rows it holds none.
    @Test func aWalkKeptByAScreenIsStateBeyondTheRows() throws {
        let session = try Self.randomSession(seed: 5, schema: .empty)
        let root = try #require(session.stack.firstEntry?.id)
        _ = try session.apply(.setHandler(screen: root, key: "p", passBack: false), seq: 100, at: Date())
        #expect(!session.hasStateBeyondItsRows || session.resource().json.serialized().contains("received"))
        let top = try #require(session.stack.lastEntry?.id)
        _ = try session.apply(.publish(screen: top, key: "p", value: 1), seq: 101, at: Date())
        #expect(session.hasStateBeyondItsRows)
        #expect(!(try DormantSession(session).session(id: session.id).hasStateBeyondItsRows))
    }

    @Test func aDamagedBufferIsReportedNotTrapped() throws {
        let session = try Self.randomSession(seed: 3, schema: Self.schema)
        let dormant = DormantSession(session)
        #expect(dormant.byteCount > 0)
        #expect(throws: CorruptSessionError.self) { try DormantSession.truncated(dormant).session(id: session.id) }
    }

    // MARK: - Through the service

    /// A service on a real SQLite file that keeps at most `maxHot` sessions in their full form.
    struct Fixture {
        let service: SessionService
        let store: SQLiteSessionStore
        let folder: URL

        init(maxHot: Int) async throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-dormant-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            store = try await SQLiteSessionStore.open(path: folder.appendingPathComponent("s.sqlite").path)
            var configuration = ServiceConfiguration()
            configuration.maxHotSessions = maxHot
            configuration.snapshotInterval = 4
            service = SessionService(store: store, configuration: configuration)
        }

        func close() async {
            await store.close()
            try? FileManager.default.removeItem(at: folder)
        }

        func create(_ body: JSONValue) async throws -> CreatedSession {
            guard case .created(let created) = try await service.sessions.create(body: body, idempotency: nil) else {
                throw TestTimeout("create replayed")
            }
            return created
        }

        func perform(_ command: SessionCommand, on session: CreatedSession) async throws {
            _ = try await service.sessions.perform(
                command, on: session.session.id, context: CommandContext(credential: .token(session.token)))
        }

        /// Every read a client can make of the session, with its token.
        func reads(_ session: CreatedSession) async throws -> [String] {
            let id = session.session.id
            let credential = Credential.token(session.token)
            var answers: [String] = []
            for query: SessionQuery in [
                .session, .explainedSession, .stacks, .screen("root"), .screen("top"), .explainedScreen("top"),
                .stack("selected"),
            ] {
                switch try await service.sessions.read(query, of: id, credential: credential) {
                case .session(let rendered): answers.append("\(rendered.version) \(String(decoding: rendered.json, as: UTF8.self))")
                case .screen(let screen, let version): answers.append("\(version) \(screen.json.serialized())")
                case .stacks(let list): answers.append(list.json.serialized())
                case .stack(let stack, let version): answers.append("\(version) \(stack.json.serialized())")
                }
            }
            let head = try await service.sessions.readerHead(of: id, credential: .admin, snapshot: true)
            answers.append("\(head.version) \(head.snapshot?.json.serialized() ?? "")")
            return answers
        }
    }

    /// Sessions with stacks, tabs, presentations, values, handlers with memory and a schema,
    /// put away past a hot set of two (and one keeping a preference's walk, which stays hot past
    /// it): each answers every read exactly as before, from memory (the store is closed by then),
    /// and a change to one made dormant lands on it as on a hot one.
    @Test func dormantSessionsAnswerAsHotOnesFromMemory() async throws {
        let fixture = try await Fixture(maxHot: 2)
        defer { Task { [fixture] in await fixture.close() } }
        var sessions: [CreatedSession] = []
        for index in 0..<8 {
            let body: JSONValue =
                index % 2 == 0
                ? ["root": ["name": "Home", "values": ["title": .string("home \(index)")]], "schema": Self.schema.json]
                : ["root": ["name": "Home"]]
            let session = try await fixture.create(body)
            sessions.append(session)
            try await fixture.perform(.push(stack: "main", body: ["name": "List", "values": ["count": 2]]), on: session)
            try await fixture.perform(.createStack(["id": "settings"]), on: session)
            try await fixture.perform(.push(stack: "settings", body: ["name": "Detail", "values": ["k": [1, 2]]]), on: session)
            try await fixture.perform(.setHandler(screen: "root", key: "pick", body: ["passBack": true]), on: session)
            try await fixture.perform(.present(["from": "main:top"]), on: session)
            try await fixture.perform(.selectStack(["stack": "settings"]), on: session)
            if index % 3 == 0 {
                try await fixture.perform(.createStack(["id": "gone"]), on: session)
                try await fixture.perform(.removeStack(stack: "gone"), on: session)
            }
        }
        let registry = fixture.service.sessions
        // A walk made in this process keeps its session hot; unloaded and loaded, it has none.
        try await fixture.perform(.publish(screen: "main:top", key: "pick", body: ["value": "x"]), on: sessions[1])
        registry.unload(sessions[1].session.id)
        // One that keeps its walk stays hot, past the bound.
        let walked = sessions[2]
        try await fixture.perform(.publish(screen: "main:top", key: "pick", body: ["value": "y"]), on: walked)

        var before: [[String]] = []
        for session in sessions { before.append(try await fixture.reads(session)) }
        try await waitUntil("the hot set shrinks to its bound and the walk") { registry.hotCount <= 3 }
        #expect(registry.loadedCount == sessions.count)
        #expect(registry.isHot(walked.session.id))
        let dormant = sessions.filter { !registry.isHot($0.session.id) }
        #expect(dormant.count >= sessions.count - 3)

        // A change to a dormant session: applied to the session as it was, at the next version.
        let changed = try #require(dormant.first)
        let index = try #require(sessions.firstIndex { $0.session.id == changed.session.id })
        try await fixture.perform(.patchValues(screen: "root", body: ["title": "changed"]), on: changed)
        try await fixture.perform(.push(stack: "settings", body: ["name": "More"]), on: changed)
        let after = try await fixture.reads(changed)
        registry.unload(changed.session.id)
        #expect(try await fixture.reads(changed) == after, "the change is what a reload from the store shows")
        #expect(after != before[index])
        before[index] = after

        try await waitUntil("the hot set shrinks to its bound and the walk") { registry.hotCount <= 3 }
        let stillDormant = sessions.filter { !registry.isHot($0.session.id) }.map(\.session.id)
        #expect(stillDormant.count >= sessions.count - 3)
        // With the store closed, only memory can answer: every read of every session as before.
        await fixture.store.close()
        for (session, expected) in zip(sessions, before) where stillDormant.contains(session.session.id) {
            #expect(try await fixture.reads(session) == expected)
            #expect(registry.isHot(session.session.id))
        }
    }

    /// A wrong token is refused by a dormant session as by a hot one, and the right one admitted.
    @Test func aDormantSessionChecksTokensAsAHotOne() async throws {
        let fixture = try await Fixture(maxHot: 1)
        defer { Task { [fixture] in await fixture.close() } }
        let first = try await fixture.create(["root": ["name": "A"]])
        let second = try await fixture.create(["root": ["name": "B"]])
        _ = try await fixture.reads(second)
        let registry = fixture.service.sessions
        try await waitUntil("the first session is dormant") { !registry.isHot(first.session.id) }
        await #expect(throws: SessionError.self) {
            _ = try await registry.read(.session, of: first.session.id, credential: .token(second.token))
        }
        _ = try await fixture.reads(second)
        try await waitUntil("the first session is dormant again") { !registry.isHot(first.session.id) }
        _ = try await registry.read(.session, of: first.session.id, credential: .token(first.token))
    }
}

extension DormantSession {
    /// The same form cut short by one byte (as damage would): for the test of its reading.
    static func truncated(_ form: DormantSession) -> DormantSession {
        DormantSession(bytes: Array(form.bytes.dropLast()), version: form.version, schema: form.schema)
    }
}

