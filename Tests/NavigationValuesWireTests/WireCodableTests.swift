import Foundation
import NavigationValues
import NavigationValuesWire
import Testing

/// `Codable` and the hand-written fast paths agree on every shape of the API: what `JSONEncoder`
/// writes is what `json` writes, and what `JSONDecoder` reads back from either is the value, for
/// every resource, every event type and every kind of answer.
@Suite struct WireCodableTests {
    static let at = SessionEventTests.at
    static let screen = SessionEventTests.screen("c_1", index: 1, memory: true)
    static let tab = StackResource(
        id: StackID("search"), kind: .tab, screens: [SessionEventTests.screen("c_s", index: 0)])
    static let sheet = StackResource(
        id: StackID("p_1"), kind: .sheet, presenter: ScreenID("c_1"),
        screens: [SessionEventTests.screen("c_p", index: 0)])
    static let schema = SchemaResource(
        values: [
            "title": .init(type: .string, defaultValue: ""), "draft": .init(type: .any, isObservationIgnored: true),
        ],
        preferences: ["selection": .init(type: .string, defaultValue: "none")], isStrict: true)
    static let session = SessionResource(
        id: SessionID("s_1"), version: 9, state: .active, createdAt: at, updatedAt: at, schema: schema.json,
        screens: [SessionEventTests.screen("c_0", index: 0), screen], selectedStack: StackID("search"),
        visibleScreen: ScreenID("c_p"), stacks: [tab, sheet],
        origin: SessionOrigin(session: SessionID("s_0"), version: 4))
    static let observer = ObserverResource(
        id: ObserverID("o_1"), session: SessionID("s_1"), label: "support", createdAt: at, expiresAt: at + 60)
    static let unrecognized = UnrecognizedEvent(
        seq: 12, type: "screen.teleported", json: ["seq": 12, "type": "screen.teleported", "at": "x", "to": [1]])

    /// Checks that `value` round-trips both ways through `Codable` and its fast path.
    func expectAgreement<T: WireCodable & Equatable>(
        _ value: T, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let encoded = try JSONEncoder().encode(value)
        #expect(try JSONValue(parsing: Array(encoded)) == value.json, sourceLocation: sourceLocation)
        #expect(try JSONDecoder().decode(T.self, from: encoded) == value, sourceLocation: sourceLocation)
        let written = Data(value.json.serialized().utf8)
        #expect(try JSONDecoder().decode(T.self, from: written) == value, sourceLocation: sourceLocation)
        #expect(try T(json: JSONValue(parsing: Array(encoded)), pointer: "") == value, sourceLocation: sourceLocation)
    }

    @Test func everyResourceAgrees() throws {
        try expectAgreement(Self.session)
        try expectAgreement(
            SessionResource(
                id: SessionID("s_2"), version: 1, state: .ended, createdAt: Self.at, updatedAt: Self.at, schema: [:],
                screens: [Self.screen]))
        try expectAgreement(Self.screen)
        try expectAgreement(HandlerResource(passBack: false, memory: HandlerMemory(received: 7, decision: .stopped)))
        try expectAgreement(Self.schema)
        try expectAgreement(Self.tab)
        try expectAgreement(Self.sheet)
        try expectAgreement(
            StackList(stacks: [Self.tab, Self.sheet], selectedStack: StackID("search"), visibleScreen: nil, version: 3))
        try expectAgreement(SessionOrigin(session: SessionID("s_0"), version: 4))
        let summary = SessionSummary(id: SessionID("s_1"), version: 9, state: .active, depth: 2, updatedAt: Self.at)
        try expectAgreement(summary)
        try expectAgreement(SessionList(sessions: [summary], nextCursor: SessionID("s_1")))
        try expectAgreement(SessionList(sessions: [], nextCursor: nil))
        try expectAgreement(CreatedSession(session: Self.session, token: "t_abc"))
        try expectAgreement(AffectedValue(screen: ScreenID("c_1"), key: "title", value: ["nested": [1, 2.5, .null]]))
        try expectAgreement(PreferenceDelivery(screen: ScreenID("c_1"), value: "chosen"))
        try expectAgreement(Self.observer)
        try expectAgreement(CreatedObserver(observer: Self.observer, token: "ro_x"))
        try expectAgreement(ObserverList(observers: [Self.observer], nextCursor: ObserverID("o_1")))
        try expectAgreement(StreamTicket(ticket: "st_x", session: nil, expiresAt: Self.at))
        try expectAgreement(
            JSONPatch([
                .test(path: "/version", value: 1), .add(path: "/screens/1", value: ["id": "c_1"]),
                .remove(path: "/a"), .replace(path: "/b", value: true), .move(from: "/c", path: "/d"),
                .copy(from: "/e", path: "/f"),
            ]))
        try expectAgreement(
            ProblemDocument(
                type: "/problems/invalid", title: "Invalid", status: 422, detail: "bad",
                errors: [.init(pointer: "/values/counter", detail: "expected an integer")]))
        try expectAgreement(Self.unrecognized)
    }

    @Test(arguments: SessionEventTests.everyEvent)
    func everyEventAgrees(_ event: SessionEvent) throws {
        let recorded = RecordedEvent(seq: 5, at: Self.at, event: event)
        try expectAgreement(recorded)
        try expectAgreement(ReceivedEvent.event(recorded))
        try expectAgreement(event)
        try expectAgreement(EventPage(events: [.event(recorded), .unrecognized(Self.unrecognized)], last: 12))
        try expectAgreement(HistoryPage(events: [.event(recorded)], next: 6))
        try expectAgreement(HistoryPage(events: [], next: nil))
    }

    @Test(arguments: AnswerDecodingTests.everyResult)
    func everyAnswerAgreesGivenItsKind(_ result: MutationResult) throws {
        let encoded = try JSONEncoder().encode(result)
        #expect(try JSONValue(parsing: Array(encoded)) == result.json ?? ["version": .integer(result.version)])
        let decoder = JSONDecoder()
        decoder.userInfo[MutationResult.kindKey] = result.kind
        decoder.userInfo[MutationResult.operationKindsKey] = result.operationKinds
        #expect(try decoder.decode(MutationResult.self, from: encoded) == result)
        if let json = result.json {
            #expect(try decoder.decode(MutationResult.self, from: Data(json.serialized().utf8)) == result)
        }
    }

    @Test func decodingErrorsNameTheMemberAndAnAnswerNeedsItsKind() throws {
        let broken = Data(#"{"id": "c_1", "index": "one"}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(ScreenResource.self, from: broken) }
        do {
            _ = try JSONDecoder().decode(
                [ScreenResource].self, from: Data("[\(String(decoding: broken, as: UTF8.self))]".utf8))
        } catch let DecodingError.dataCorrupted(context) {
            #expect(context.underlyingError is WireDecodingError)
            #expect(context.codingPath.count == 1, "the element's path: \(context.codingPath)")
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(MutationResult.self, from: Data(#"{"version": 3}"#.utf8))
        }
        let nested = try? SessionResource(json: ["id": "s"], pointer: "/sessions/0")
        #expect(nested == nil)
        #expect(throws: WireDecodingError.self) { try SessionResource(json: ["id": "s"], pointer: "/sessions/0") }
        do {
            _ = try SessionResource(json: ["id": "s"], pointer: "/sessions/0")
        } catch {
            #expect(error.pointer.hasPrefix("/sessions/0"), "\(error)")
        }
    }
}
