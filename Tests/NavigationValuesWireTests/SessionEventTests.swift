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
        .stackCreated(StackResource(id: StackID("search"), kind: .tab, screens: [screen("c_s", index: 0)])),
        .stackSelected(StackID("search")),
        .stackRemoved(
            stack: StackID("search"), screens: [ScreenID("c_s2"), ScreenID("c_s")], dismissed: [StackID("p_1")],
            selected: .main),
        .stackMoved(stack: StackID("search"), position: 2),
        .stackPresented(
            StackResource(
                id: StackID("p_1"), kind: .fullScreenCover, presenter: ScreenID("c_1"),
                screens: [screen("c_p", index: 0, memory: true), screen("c_q", index: 1)])),
        .stackDismissed(
            stack: StackID("p_1"), screens: [ScreenID("c_q"), ScreenID("c_p")], dismissed: [StackID("p_2")]),
        .stackScreenPushed(stack: StackID("search"), screen: screen("c_s2", index: 1)),
        .stackScreensPopped(stack: .main, screens: [ScreenID("c_1")], dismissed: [StackID("p_2"), StackID("p_1")]),
        .stackScreensPopped(stack: StackID("search"), screens: [], dismissed: []),
        .stackPathReplaced(
            stack: StackID("p_1"), popped: [ScreenID("c_q")], pushed: [screen("c_r", index: 1)], dismissed: []),
        .screensReplaced(
            stack: .main, screen: ScreenID("c_1"), popped: [ScreenID("c_3"), ScreenID("c_2")],
            pushed: [screen("c_4", index: 2)], dismissed: [StackID("p_1")]),
        .screenReturned(
            screen: ScreenID("c_p"), key: "pick", value: ["id": 1],
            deliveries: [PreferenceDelivery(screen: ScreenID("c_1"), value: ["id": 1])], stoppedAt: ScreenID("c_1"),
            stack: StackID("p_1"), popped: [ScreenID("c_p")], dismissed: [StackID("p_1")]),
        .screenReturned(
            screen: ScreenID("c_2"), key: "pick", value: .null, deliveries: [], stoppedAt: nil, stack: .main,
            popped: [ScreenID("c_2")], dismissed: []),
        .batchApplied([
            .screenPushed(screen("c_9", index: 3)),
            .valuesUpdated(
                screen: ScreenID("c_9"), set: ["title": "z"], removed: [],
                affected: [AffectedValue(screen: ScreenID("c_9"), key: "title", value: "z")]),
            .stackSelected(.main),
            .stackDismissed(stack: StackID("p_1"), screens: [ScreenID("c_p")], dismissed: []),
        ]),
        .batchApplied([]),
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

    /// The fields docs/API.md lists for each type, exactly.
    @Test func eventsHaveTheFieldsAPIMarkdownNames() {
        let expected: [SessionEvent.Kind: Set<String>] = [
            .sessionCreated: ["root", "schema"], .screenPushed: ["screen"], .screensPopped: ["screens"],
            .pathReplaced: ["popped", "pushed"], .valuesUpdated: ["screen", "set", "removed", "affected"],
            .handlerSet: ["screen", "key", "passBack"], .handlerRemoved: ["screen", "key"],
            .preferencePublished: ["screen", "key", "value", "deliveries", "stoppedAt"], .sessionEnded: [],
            .stackCreated: ["stack"], .stackSelected: ["stack"],
            .stackRemoved: ["stack", "screens", "dismissed", "selected"], .stackMoved: ["stack", "position"],
            .stackPresented: ["stack"], .stackDismissed: ["stack", "screens", "dismissed"],
            .stackScreenPushed: ["stack", "screen"], .stackScreensPopped: ["stack", "screens", "dismissed"],
            .stackPathReplaced: ["stack", "popped", "pushed", "dismissed"],
            .screensReplaced: ["stack", "screen", "popped", "pushed", "dismissed"],
            .screenReturned: ["screen", "key", "value", "deliveries", "stoppedAt", "stack", "popped", "dismissed"],
            .batchApplied: ["events"],
        ]
        for event in Self.everyEvent {
            let keys = Set(RecordedEvent(seq: 1, at: Self.at, event: event).json.objectValue?.keys.map { $0 } ?? [])
            #expect(keys == (expected[event.kind] ?? []).union(["seq", "type", "at"]), "\(event.kind)")
        }
    }

    /// A change of a stack's screens keeps docs/API.md's type only on the main stack, and only when it
    /// dismissed nothing (docs/Stacks.md, Events).
    @Test func theMainStackKeepsAPIMarkdownsTypesUnlessPresentationsWentWithTheChange() {
        let screen = Self.screen("c_1", index: 1)
        let tab = StackID("search")
        let popped = [ScreenID("c_2")]
        let sheet = [StackID("p_1")]
        #expect(SessionEvent.pushed(screen, onto: .main) == .screenPushed(screen))
        #expect(SessionEvent.pushed(screen, onto: tab) == .stackScreenPushed(stack: tab, screen: screen))
        #expect(SessionEvent.popped(popped, from: .main, dismissed: []) == .screensPopped(popped))
        #expect(
            SessionEvent.popped(popped, from: .main, dismissed: sheet)
                == .stackScreensPopped(stack: .main, screens: popped, dismissed: sheet))
        #expect(
            SessionEvent.popped(popped, from: tab, dismissed: [])
                == .stackScreensPopped(stack: tab, screens: popped, dismissed: []))
        #expect(
            SessionEvent.replacedPath(of: .main, popped: popped, pushed: [screen], dismissed: [])
                == .pathReplaced(popped: popped, pushed: [screen]))
        #expect(
            SessionEvent.replacedPath(of: .main, popped: popped, pushed: [screen], dismissed: sheet)
                == .stackPathReplaced(stack: .main, popped: popped, pushed: [screen], dismissed: sheet))
        #expect(
            SessionEvent.replacedPath(of: tab, popped: [], pushed: [], dismissed: [])
                == .stackPathReplaced(stack: tab, popped: [], pushed: [], dismissed: []))
    }

    @Test func aMovedTabsPositionIsANonNegativeInteger() {
        let good = RecordedEvent(seq: 2, at: Self.at, event: .stackMoved(stack: StackID("t"), position: 0)).json
        for bad: JSONValue in [-1, 1.5, "1", .null] {
            #expect(throws: WireDecodingError(pointer: "/position", reason: "expected an integer of at least 0")) {
                try RecordedEvent(json: replacing(good, "position", with: bad))
            }
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

    @Test func aBatchHoldsEachEventWithItsTypeAndNeverAnotherBatch() throws {
        let batch = RecordedEvent(
            seq: 5, at: Self.at,
            event: .batchApplied([.stackSelected(StackID("t")), .screensPopped([ScreenID("c_2")])]))
        #expect(
            batch.json["events"]
                == [["type": "stack.selected", "stack": "t"], ["type": "screens.popped", "screens": ["c_2"]]])
        func failure(_ inner: JSONValue) -> WireDecodingError? {
            do {
                _ = try RecordedEvent(
                    json: replacing(batch.json, "events", with: [["type": "stack.selected", "stack": "t"], inner]))
                return nil
            } catch {
                return error
            }
        }
        #expect(failure(["type": "batch.applied", "events": []])?.pointer == "/events/1/type")
        #expect(failure(["type": "session.ended"])?.pointer == "/events/1/type")
        #expect(failure(["type": "stack.selected"])?.pointer == "/events/1/stack")
        #expect(
            failure([
                "type": "stack.presented", "stack": ["id": "p", "kind": "pager", "presenter": .null, "screens": []],
            ])?.pointer == "/events/1/stack/kind")
    }

    @Test func sessionsWithSeveralStacksRoundTripAndOldJSONReadsAsOneMainStack() throws {
        let sheet = StackResource(
            id: StackID("p_1"), kind: .sheet, presenter: ScreenID("c_root"), screens: [Self.screen("c_p", index: 0)])
        let session = SessionResource(
            id: SessionID("s_1"), version: 3, state: .active, createdAt: Self.at, updatedAt: Self.at,
            schema: [:], screens: [Self.screen("c_root", index: 0)], selectedStack: StackID("t"),
            visibleScreen: ScreenID("c_t"),
            stacks: [StackResource(id: StackID("t"), kind: .tab, screens: [Self.screen("c_t", index: 0)]), sheet])
        #expect(try SessionResource(json: session.json) == session)
        #expect(session.json["selectedStack"] == "t" && session.json["visibleScreen"] == "c_t")
        // A session written before several stacks (a stored snapshot) has none of the new members.
        guard case .object(var old) = session.json else { return }
        old["selectedStack"] = nil
        old["visibleScreen"] = nil
        old["stacks"] = nil
        let read = try SessionResource(json: .object(old))
        #expect(read.selectedStack == .main && read.stacks.isEmpty && read.visibleScreen == ScreenID("c_root"))
        let list = StackList(stacks: [sheet], selectedStack: .main, visibleScreen: ScreenID("c_p"), version: 3)
        #expect(try StackList(json: list.json) == list)
    }

    private func replacing(_ json: JSONValue, _ name: String, with value: JSONValue) -> JSONValue {
        guard case .object(var members) = json else { return json }
        members[name] = value
        return .object(members)
    }
}
