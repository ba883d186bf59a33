import Foundation
import NavigationValues
import NavigationValuesWire
import Testing

/// The bytes a mutation stores and sends, written without a `JSONValue` tree, are the tree's
/// text exactly: for every event (as stored, and tagged for the stream of every session) and
/// every answer, and for screens with no handler, one handler (with and without its memory) and
/// several, and names and strings that need escapes.
@Suite struct WireBytesTests {
    static let screens: [ScreenResource] = [
        SessionEventTests.screen("c_1", index: 1),
        SessionEventTests.screen("c_2", index: 2, memory: true),
        ScreenResource(id: ScreenID("c_0"), index: 0, name: "Home", previous: nil, next: ScreenID("c_1")),
        ScreenResource(
            id: ScreenID("c_3"), index: 3, name: "Quote \" and \\ and \n\u{1}é", role: .navigationStack,
            previous: ScreenID("c_2"), next: nil, values: ["tab\t": "a\"b", "z": -12, "a": 0.5],
            resolved: ["tab\t": "a\"b"], preferences: [:],
            handlers: ["pick \"it\"": HandlerResource(passBack: false)]),
        ScreenResource(
            id: ScreenID("c_4"), index: 4, name: "Held", previous: nil, next: nil,
            handlers: ["pick": HandlerResource(passBack: true, memory: HandlerMemory(received: [1], decision: .stopped))]),
        ScreenResource(
            id: ScreenID("c_5"), index: 5, name: "Passed", previous: nil, next: nil,
            handlers: [
                "pick": HandlerResource(passBack: true, memory: HandlerMemory(received: 1, decision: .passedBack(2)))
            ]),
    ]

    static var events: [SessionEvent] {
        SessionEventTests.everyEvent
            + screens.flatMap { screen in
                [
                    SessionEvent.screenPushed(screen), .stackScreenPushed(stack: StackID("t\"1"), screen: screen),
                ]
            }
            + [
                .valuesUpdated(screen: ScreenID("c_1"), set: [:], removed: [], affected: []),
                .valuesUpdated(
                    screen: ScreenID("c_1"), set: ["a\n": .null], removed: ["x\"", "y"],
                    affected: [AffectedValue(screen: ScreenID("c_1"), key: "a\n", value: [:])]),
                .handlerSet(screen: ScreenID("c_1"), key: "k\\", passBack: true),
                .stackScreensPopped(stack: StackID("t"), screens: [ScreenID("c_1")], dismissed: []),
            ]
    }

    @Test(arguments: events, [Int64(1), 42, 9_007_199_254_740_993, -3])
    func anEventsBytesAreItsTreesText(_ event: SessionEvent, seq: Int64) {
        let recorded = RecordedEvent(seq: seq, at: SessionEventTests.at, event: event)
        #expect(recorded.serializedBytes() == Array(recorded.json.serialized().utf8))
        let session = SessionID("s_\"1")
        #expect(
            recorded.serializedBytes(taggedWith: session)
                == Array(recorded.json(taggedWith: session).serialized().utf8))
    }

    static var results: [MutationResult] {
        AnswerDecodingTests.everyResult
            + screens.flatMap { screen in
                [
                    MutationResult.pushed(screen: screen, version: 3), .handlerSet(screen: screen, version: 4),
                    .valuesUpdated(
                        screen: screen, affected: [AffectedValue(screen: screen.id, key: "\u{7}", value: 1.25)],
                        version: 5),
                ]
            }
            + [
                .popped([ScreenID("c_1")], version: Int64.max), .handlerRemoved(version: 0),
                .stackPopped(stack: StackID("t"), popped: [], dismissed: [], version: 6),
            ]
    }

    @Test(arguments: results)
    func anAnswersBytesAreItsTreesText(_ result: MutationResult) {
        #expect(result.serializedBytes() == result.json.map { Array($0.serialized().utf8) })
    }

    @Test(arguments: [Int64.min, Int64.min + 1, -10, -1, 0, 1, 9, 10, 99, 100, Int64.max])
    func integersWriteAsTheirDecimalText(_ value: Int64) {
        #expect(JSONValue.integer(value).serialized() == String(value))
    }
}
