import Foundation
import NavigationValues
import NavigationValuesWire
import Testing

/// The answers clients decode: each encoder beside its decoder, round-tripped case by case, and
/// decoding that ignores what it does not know (the server gains members and event types).
@Suite struct AnswerDecodingTests {
    static let screen = SessionEventTests.screen("c_1", index: 1)

    static let everyResult: [MutationResult] = [
        .pushed(screen: screen, version: 2),
        .popped([ScreenID("c_3"), ScreenID("c_2")], version: 3),
        .popped([], version: 4),
        .pathReplaced(
            popped: [ScreenID("c_2")], pushed: [screen, SessionEventTests.screen("c_5", index: 2)], version: 5),
        .valuesUpdated(
            screen: screen, affected: [AffectedValue(screen: ScreenID("c_1"), key: "title", value: "y")], version: 6),
        .handlerSet(screen: screen, version: 7),
        .handlerRemoved(version: 8),
        .published(
            deliveries: [PreferenceDelivery(screen: ScreenID("c_1"), value: ["id": 4])], stoppedAt: ScreenID("c_1"),
            version: 9),
        .published(deliveries: [], stoppedAt: nil, version: 10),
        .ended(version: 11),
        // Several stacks (docs/Stacks.md).
        .stackCreated(
            stack: StackResource(
                id: StackID("search"), kind: .tab, screens: [SessionEventTests.screen("c_s", index: 0)]),
            version: 12),
        .stackSelected(stack: StackID("search"), visibleScreen: ScreenID("c_s"), version: 13),
        .stackRemoved(
            stack: StackID("search"), screens: [ScreenID("c_s")], dismissed: [StackID("p_1")], selected: .main,
            version: 14),
        .stackPresented(
            stack: StackResource(
                id: StackID("p_2"), kind: .sheet, presenter: ScreenID("c_1"),
                screens: [SessionEventTests.screen("c_p", index: 0)]),
            version: 15),
        .stackDismissed(stack: StackID("p_2"), screens: [ScreenID("c_p")], dismissed: [], version: 16),
        .stackPopped(stack: StackID("t"), popped: [ScreenID("c_9")], dismissed: [StackID("p_3")], version: 17),
        .stackPathReplaced(
            stack: StackID("t"), popped: [ScreenID("c_9")], pushed: [screen], dismissed: [], version: 18),
        .stackMoved(stack: StackID("search"), position: 1, version: 19),
        .screensReplaced(screen: screen, popped: [ScreenID("c_4")], pushed: [], dismissed: [], version: 19),
        .returned(
            deliveries: [PreferenceDelivery(screen: ScreenID("c_1"), value: 3)], stoppedAt: nil, stack: StackID("p_2"),
            popped: [ScreenID("c_p")], dismissed: [StackID("p_2")], version: 20),
        .batchApplied(
            results: [
                .pushed(screen: screen, version: 21), .popped([ScreenID("c_1")], version: 21),
                .handlerRemoved(version: 21),
                .stackSelected(stack: .main, visibleScreen: ScreenID("c_0"), version: 21),
            ],
            version: 21),
    ]

    @Test func everyKindIsCovered() {
        #expect(Set(Self.everyResult.map(\.kind)) == Set(MutationResult.Kind.allCases))
    }

    @Test(arguments: everyResult)
    func everyAnswerRoundTripsAsItsKind(_ result: MutationResult) throws {
        // `.ended` answers 204 without a body: its version comes from the ETag.
        // A batch's answer decodes with its operations' kinds, in order.
        let decoded = try MutationResult(
            json: result.json, kind: result.kind, version: result.version, operations: result.operationKinds)
        #expect(decoded == result)
        if let json = result.json {
            #expect(
                try MutationResult(
                    json: json.serialized().parsed, kind: result.kind, operations: result.operationKinds) == result)
        }
    }

    /// A session after a change, as an answer reads it: its screens as they are now, and the one
    /// a user sees.
    struct After: ChangedSession {
        var screens: [ScreenResource]
        var visibleScreenID: ScreenID?
        func screenResource(_ id: ScreenID) -> ScreenResource? { screens.first { $0.id == id } }
    }

    /// Every answer is its event's, read in one place: each event of every type (but the one that
    /// creates a session) answers as its endpoint documents it.
    @Test func everyMutationsAnswerIsDerivedFromItsEvent() throws {
        let now = SessionEventTests.screen("c_1", index: 1, memory: false)
        let after = After(screens: [now], visibleScreenID: ScreenID("c_top"))
        let main = SessionEventTests.screen("c_9", index: 3)
        let expected: [SessionEvent.Kind: MutationResult] = [
            .screenPushed: .pushed(screen: SessionEventTests.screen("c_1", index: 1), version: 7),
            .pathReplaced: .pathReplaced(
                popped: [ScreenID("c_2")],
                pushed: [SessionEventTests.screen("c_4", index: 1), SessionEventTests.screen("c_5", index: 2)],
                version: 7),
            .valuesUpdated: .valuesUpdated(
                screen: now,
                affected: [
                    AffectedValue(screen: ScreenID("c_1"), key: "title", value: "y"),
                    AffectedValue(screen: ScreenID("c_2"), key: "a", value: .null),
                ], version: 7),
            .handlerSet: .handlerSet(screen: now, version: 7),
            .handlerRemoved: .handlerRemoved(version: 7),
            .sessionEnded: .ended(version: 7),
            .stackSelected: .stackSelected(stack: StackID("search"), visibleScreen: ScreenID("c_top"), version: 7),
            .stackMoved: .stackMoved(stack: StackID("search"), position: 2, version: 7),
            .stackScreenPushed: .pushed(screen: SessionEventTests.screen("c_s2", index: 1), version: 7),
            .stackRemoved: .stackRemoved(
                stack: StackID("search"), screens: [ScreenID("c_s2"), ScreenID("c_s")], dismissed: [StackID("p_1")],
                selected: .main, version: 7),
            .stackDismissed: .stackDismissed(
                stack: StackID("p_1"), screens: [ScreenID("c_q"), ScreenID("c_p")], dismissed: [StackID("p_2")],
                version: 7),
            .screensReplaced: .screensReplaced(
                screen: now, popped: [ScreenID("c_3"), ScreenID("c_2")],
                pushed: [SessionEventTests.screen("c_4", index: 2)], dismissed: [StackID("p_1")], version: 7),
        ]
        for event in SessionEventTests.everyEvent {
            let steps: [MutationResult] =
                if case .batchApplied(let events) = event {
                    events.map { _ in .handlerRemoved(version: 7) }
                } else {
                    []
                }
            let answer = MutationResult(answering: event, version: 7, steps: steps, in: after)
            switch event {
            case .sessionCreated:
                #expect(answer == nil)
            case .batchApplied:
                #expect(answer == .batchApplied(results: steps, version: 7))
                #expect(
                    MutationResult(answering: event, version: 7, steps: steps + [.ended(version: 7)], in: after) == nil)
            case .screensPopped(let popped):
                #expect(answer == .popped(popped, version: 7))
            case .stackCreated(let stack):
                #expect(answer == .stackCreated(stack: stack, version: 7))
            case .stackPresented(let stack):
                #expect(answer == .stackPresented(stack: stack, version: 7))
            case .stackScreensPopped(let stack, let popped, let dismissed):
                #expect(answer == .stackPopped(stack: stack, popped: popped, dismissed: dismissed, version: 7))
            case .stackPathReplaced(let stack, let popped, let pushed, let dismissed):
                #expect(
                    answer
                        == .stackPathReplaced(
                            stack: stack, popped: popped, pushed: pushed, dismissed: dismissed, version: 7))
            case .preferencePublished(_, _, _, let deliveries, let stoppedAt):
                #expect(answer == .published(deliveries: deliveries, stoppedAt: stoppedAt, version: 7))
            case .screenReturned(_, _, _, let deliveries, let stoppedAt, let stack, let popped, let dismissed):
                #expect(
                    answer
                        == .returned(
                            deliveries: deliveries, stoppedAt: stoppedAt, stack: stack, popped: popped,
                            dismissed: dismissed, version: 7))
            default:
                #expect(answer == expected[event.kind], "\(event.kind)")
            }
        }
        // A change whose screen is not there after it has no answer.
        #expect(
            MutationResult(answering: .handlerSet(screen: main.id, key: "k", passBack: true), version: 7, in: after)
                == nil)
    }

    @Test func aBatchAnswerNeedsOneKindPerResultAndNamesTheFailingOne() {
        let batch = MutationResult.batchApplied(
            results: [.popped([ScreenID("c_1")], version: 3), .handlerRemoved(version: 3)], version: 3)
        #expect(throws: WireDecodingError.self) {
            try MutationResult(json: batch.json, kind: .batchApplied, operations: [.popped])
        }
        #expect(throws: WireDecodingError(pointer: "/results/1/screen", reason: "missing")) {
            try MutationResult(json: batch.json, kind: .batchApplied, operations: [.popped, .pushed])
        }
    }

    @Test func anAnswerDecodesWithMembersItDoesNotKnow() throws {
        var json = try #require(MutationResult.pushed(screen: Self.screen, version: 2).json?.objectValue)
        json["stack"] = "main"
        var screen = try #require(Self.screen.json.objectValue)
        screen["presentation"] = ["style": "sheet"]
        json["screen"] = .object(screen)
        #expect(try MutationResult(json: .object(json), kind: .pushed) == .pushed(screen: Self.screen, version: 2))
    }

    @Test func aWrongAnswerNamesTheMember() {
        #expect(throws: WireDecodingError(pointer: "/version", reason: "missing")) {
            try MutationResult(json: ["popped": []], kind: .popped)
        }
        #expect(throws: WireDecodingError(pointer: "/popped/0", reason: "expected a screen id")) {
            try MutationResult(json: ["popped": [1], "version": 2], kind: .popped)
        }
        #expect(throws: WireDecodingError.self) { try MutationResult(json: nil, kind: .ended) }
    }

    // MARK: - Pages of events

    static let known = RecordedEvent(seq: 3, at: SessionEventTests.at, event: .screenPushed(screen))
    static let newer: JSONValue = [
        "seq": 4, "type": "screen.highlighted", "at": "2026-11-30T10:00:00.125Z", "screen": "c_1",
    ]

    @Test func pagesKeepEventsOfTypesAddedLaterInOrder() throws {
        let events = [ReceivedEvent.event(Self.known), try ReceivedEvent(json: Self.newer)]
        #expect(events[1] == .unrecognized(UnrecognizedEvent(seq: 4, type: "screen.highlighted", json: Self.newer)))
        #expect(events.map(\.seq) == [3, 4])
        let page = EventPage(events: events, last: 4)
        #expect(try EventPage(json: page.json) == page)
        #expect(try EventPage(json: page.json.serialized().parsed) == page)
        for next in [Int64?.none, 4] {
            let history = HistoryPage(events: events, next: next)
            #expect(try HistoryPage(json: history.json) == history)
        }
    }

    /// The types of several stacks (docs/Stacks.md) decode as events, not as unrecognized ones.
    @Test func eventsOfSeveralStacksDecodeAsKnownEvents() throws {
        for (index, event) in SessionEventTests.everyEvent.enumerated() {
            let recorded = RecordedEvent(seq: Int64(index + 1), at: SessionEventTests.at, event: event)
            let received = try ReceivedEvent(json: recorded.json.serialized().parsed)
            #expect(received == .event(recorded), "\(event.kind)")
        }
    }

    @Test func aMalformedKnownEventInAPageIsAnErrorNamingIt() {
        var bad = Self.known.json.objectValue ?? [:]
        bad["screen"] = "c_1"
        #expect(throws: WireDecodingError(pointer: "/events/0/screen", reason: "expected an object")) {
            try HistoryPage(json: ["events": [.object(bad)], "next": .null])
        }
        #expect(throws: WireDecodingError(pointer: "/events/0/seq", reason: "missing")) {
            try EventPage(json: ["events": [["type": "screen.highlighted"]], "last": 1])
        }
    }

    // MARK: - Problems and schemas

    @Test func problemsRoundTripAndFillWhatRFC9457LeavesOut() throws {
        let problem = ProblemDocument(
            type: "/problems/unprocessable-content", title: "Invalid request content", status: 422,
            detail: "value 'counter': expected integer",
            errors: [.init(pointer: "/counter", detail: "value 'counter': expected integer")])
        #expect(try ProblemDocument(json: problem.json, status: 400) == problem)
        #expect(problem.json["errors"]?.arrayValue?.count == 1)
        #expect(ProblemDocument(type: "t", title: "x", status: 404, detail: "d").json["errors"] == nil)
        #expect(
            try ProblemDocument(json: ["detail": "busy", "instance": "/x"], status: 503)
                == ProblemDocument(type: "about:blank", title: "", status: 503, detail: "busy"))
        #expect(throws: WireDecodingError(pointer: "/status", reason: "expected an integer")) {
            try ProblemDocument(json: ["status": "teapot"], status: 418)
        }
    }

    @Test func schemasRoundTripAndMissingMembersMeanNothingDeclared() throws {
        let schema = SchemaResource(
            values: [
                "title": .init(type: .string, defaultValue: ""),
                "draft": .init(type: .string, defaultValue: "", isObservationIgnored: true),
                "shape": .init(type: EntryType(rawValue: "geometry")),
            ],
            preferences: ["selection": .init(type: .string, defaultValue: "")], isStrict: true)
        #expect(try SchemaResource(json: schema.json) == schema)
        #expect(schema.json["values"]?["draft"]?["observationIgnored"] == true)
        #expect(schema.json["values"]?["title"]?["observationIgnored"] == nil)
        #expect(try SchemaResource(json: [:]) == SchemaResource())
        #expect(SchemaResource.EntryType.of(5) == .integer)
        #expect(SchemaResource.EntryType.of(.null) == .any)
        #expect(throws: WireDecodingError(pointer: "/values/title/type", reason: "missing")) {
            try SchemaResource(json: ["values": ["title": ["default": ""]]])
        }
    }
}

typealias EntryType = SchemaResource.EntryType

extension String {
    /// This JSON text parsed (the tests' own output, so it parses).
    var parsed: JSONValue {
        (try? JSONValue(parsing: self)) ?? .null
    }
}
