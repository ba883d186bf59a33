import Foundation
import NavigationValues
import NavigationValuesWire
import Testing

@Suite struct SessionEventTests {
    static let at = Date(timeIntervalSince1970: 1_796_032_800.125)

    static func screen(_ id: String, index: Int, memory: Bool = false) -> ScreenResource {
        ScreenResource(
            id: ScreenID(id), index: index, name: "Screen \(index)", previous: index > 0 ? ScreenID("c_prev") : nil,
            next: nil,
            values: ["title": .string("x \(index)"), "filter": ["unread": true, "tags": ["a", 1, 2.5, .null]]],
            resolved: ["title": .string("x \(index)"), "counter": 0], preferences: ["selection": "chosen"],
            handlers: [
                "selection": HandlerResource(
                    passBack: true,
                    memory: memory ? HandlerMemory(received: "chosen", decision: .passedBack("changed")) : nil),
                "stopper": HandlerResource(
                    passBack: false, memory: memory ? HandlerMemory(received: 7, decision: .stopped) : nil),
            ])
    }

    /// One event of every type, with payloads that use every field.
    static let everyEvent: [SessionEvent] = [
        .sessionCreated(
            root: screen("c_root", index: 0),
            schema: ["values": ["title": ["type": "string", "default": ""]], "preferences": [:], "strict": false]),
        .screenPushed(screen("c_1", index: 1)),
        .screensPopped([ScreenID("c_3"), ScreenID("c_2")]),
        .screensPopped([]),
        .pathReplaced(popped: [ScreenID("c_2")], pushed: [screen("c_4", index: 1), screen("c_5", index: 2)]),
        .valuesUpdated(
            screen: ScreenID("c_1"), set: ["title": "y", "nested": ["deep": [1, 2]]], removed: ["a", "b"],
            affected: [
                AffectedValue(screen: ScreenID("c_1"), key: "title", value: "y"),
                AffectedValue(screen: ScreenID("c_2"), key: "a", value: .null),
            ]),
        .handlerSet(screen: ScreenID("c_1"), key: "selection", passBack: false),
        .handlerRemoved(screen: ScreenID("c_1"), key: "selection"),
        .preferencePublished(
            screen: ScreenID("c_2"), key: "selection", value: ["id": 4],
            deliveries: [
                PreferenceDelivery(screen: ScreenID("c_2"), value: ["id": 4]),
                PreferenceDelivery(screen: ScreenID("c_1"), value: "changed"),
            ],
            stoppedAt: ScreenID("c_1")),
        .preferencePublished(screen: ScreenID("c_2"), key: "k", value: 1, deliveries: [], stoppedAt: nil),
        .sessionEnded,
    ]

    @Test func everyEventTypeIsCovered() {
        #expect(Set(Self.everyEvent.map(\.kind)) == Set(SessionEvent.Kind.allCases))
    }

    @Test(arguments: everyEvent)
    func everyEventRoundTripsThroughItsJSONAndItsText(_ event: SessionEvent) throws {
        let recorded = RecordedEvent(seq: 42, at: Self.at, event: event)
        #expect(try RecordedEvent(json: recorded.json) == recorded)
        #expect(try RecordedEvent(text: recorded.json.serialized()) == recorded)
        #expect(recorded.json["type"] == .string(event.kind.rawValue))
        #expect(recorded.json["seq"] == 42)
        #expect(recorded.json["at"] == "2026-11-30T10:00:00.125Z")
    }

    @Test(arguments: everyEvent)
    func theEveryStreamTagCarriesTheSessionAndNothingElseChanges(_ event: SessionEvent) throws {
        let recorded = RecordedEvent(seq: 3, at: Self.at, event: event)
        let tagged = recorded.json(taggedWith: SessionID("s_1"))
        #expect(tagged["session"] == "s_1")
        guard case .object(var members) = tagged else {
            Issue.record("not an object")
            return
        }
        members["session"] = nil
        #expect(JSONValue.object(members) == recorded.json)
    }

    /// The fields API.md lists for each type, exactly.
    @Test func eventsHaveTheFieldsAPIMarkdownNames() {
        let expected: [SessionEvent.Kind: Set<String>] = [
            .sessionCreated: ["root", "schema"], .screenPushed: ["screen"], .screensPopped: ["screens"],
            .pathReplaced: ["popped", "pushed"], .valuesUpdated: ["screen", "set", "removed", "affected"],
            .handlerSet: ["screen", "key", "passBack"], .handlerRemoved: ["screen", "key"],
            .preferencePublished: ["screen", "key", "value", "deliveries", "stoppedAt"], .sessionEnded: [],
        ]
        for event in Self.everyEvent {
            let keys = Set(RecordedEvent(seq: 1, at: Self.at, event: event).json.objectValue?.keys.map { $0 } ?? [])
            #expect(keys == (expected[event.kind] ?? []).union(["seq", "type", "at"]), "\(event.kind)")
        }
    }

    @Test func decodingNamesWhereTheShapeIsWrong() {
        let good = RecordedEvent(seq: 2, at: Self.at, event: .screenPushed(Self.screen("c_1", index: 1))).json
        func failure(_ json: JSONValue) -> WireDecodingError? {
            do {
                _ = try RecordedEvent(json: json)
                return nil
            } catch {
                return error
            }
        }
        var unknownType = good
        unknownType = replacing(unknownType, "type", with: "screen.teleported")
        #expect(failure(unknownType)?.pointer == "/type")
        #expect(failure(replacing(good, "seq", with: "two"))?.pointer == "/seq")
        #expect(failure(replacing(good, "at", with: "yesterday"))?.pointer == "/at")
        let badScreen = replacing(good, "screen", with: replacing(good["screen"] ?? .null, "role", with: "pager"))
        #expect(failure(badScreen)?.pointer == "/screen/role")
        #expect(failure([1, 2]) == WireDecodingError(pointer: "", reason: "expected an object"))
        #expect(throws: WireDecodingError.self) { try RecordedEvent(text: "{not json") }
    }

    @Test func snapshotsKeepEachHandlersMemoryAndAnswersDoNot() throws {
        let withMemory = Self.screen("c_1", index: 1, memory: true)
        #expect(try ScreenResource(json: withMemory.json) == withMemory)
        #expect(withMemory.json["handlers"]?["selection"]?["lastDecision"] == "passed")
        #expect(withMemory.json["handlers"]?["stopper"]?["lastDecision"] == "stopped")
        #expect(Self.screen("c_1", index: 1).json["handlers"]?["selection"] == ["passBack": true])
        let session = SessionResource(
            id: SessionID("s_1"), version: 9, state: .ended, createdAt: Self.at, updatedAt: Self.at + 1,
            schema: [:], screens: [Self.screen("c_root", index: 0), withMemory])
        #expect(try SessionResource(json: session.json) == session)
        let created = CreatedSession(session: session, token: "t_x")
        #expect(try CreatedSession(json: created.json) == created)
    }

    private func replacing(_ json: JSONValue, _ name: String, with value: JSONValue) -> JSONValue {
        guard case .object(var members) = json else { return json }
        members[name] = value
        return .object(members)
    }
}
