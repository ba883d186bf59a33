import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesSessions

/// The counts the server refuses outputs by: exact for the session it renders, never under what
/// an event lists, and refusals that name their limit.
@Suite struct OutputLimitTests {
    static let schema = SessionSchema(
        values: [
            "title": .init(type: .string, defaultValue: "untitled", isObservationIgnored: false),
            "draft": .init(type: .any, defaultValue: ["a": [1, 2]], isObservationIgnored: true),
        ], preferences: [:], isStrict: false)

    /// A session built by `count` random operations, through the same `apply` as live requests.
    static func randomSession(seed: UInt64, operations count: Int) throws -> LiveSession {
        var random = SplitMix64(state: seed)
        let at = Date(millisecondsSince1970: 1_000)
        let record = SessionRecord(
            id: SessionID("s_footprint"), version: 1, state: .active, schemaJSON: "", tokenHash: "", createdAt: at,
            updatedAt: at)
        let session = LiveSession(record: record, schema: schema)
        var next = 0
        func screenSeed(_ values: [String: JSONValue]) -> ScreenSeed {
            next += 1
            return ScreenSeed(id: ScreenID("c_\(next)"), name: "Screen \"\(next)\"\n", values: values)
        }
        try session.pushScreen(screenSeed(["title": "root"]))
        let keys = ["title", "draft", "k.1", "k-2", "é"]
        for step in 0..<count {
            let entries = session.stack.entries
            let target = entries[Int.random(in: 0..<entries.count, using: &random)].id
            let key = keys[Int.random(in: 0..<keys.count, using: &random)]
            let value = JSONValueSizeTests.randomValue(depth: 0, using: &random)
            let operation: SessionOperation
            switch Int.random(in: 0..<6, using: &random) {
            case 0: operation = .push(.main, screenSeed([key: value]))
            case 1 where entries.count > 1: operation = .pop(.main, [entries[entries.count - 1].id])
            case 2: operation = .setHandler(screen: target, key: key, passBack: Bool.random(using: &random))
            case 3: operation = .publish(screen: target, key: key, value: value)
            case 4: operation = .updateValues(screen: target, set: [:], removed: [key])
            default: operation = .updateValues(screen: target, set: [key: value], removed: [])
            }
            _ = try session.apply(operation, seq: Int64(step + 2), at: at)
        }
        return session
    }

    @Test(arguments: 1...20)
    func theFootprintIsExactlyWhatTheSessionRendersAs(seed: Int) throws {
        let session = try Self.randomSession(seed: UInt64(seed), operations: 40)
        let footprint = SessionFootprint(session)
        let rendered = session.resource()
        #expect(footprint.sessionBytes == rendered.json.serialized().utf8.count)
        #expect(footprint.screenBytes == rendered.screens.map { $0.json.serialized().utf8.count })
    }

    /// With a tab and presentations (docs/Stacks.md): each tab starts from the defaults, each
    /// presentation from what its presenter resolves to; links cross presentations.
    @Test(arguments: 1...10)
    func theFootprintOfSeveralStacksIsExactlyWhatTheSessionRendersAs(seed: Int) throws {
        var random = SplitMix64(state: UInt64(seed) &* 7_919)
        let session = try Self.randomSession(seed: UInt64(seed), operations: 10)
        let at = Date(millisecondsSince1970: 2_000)
        var seq: Int64 = 100
        func apply(_ operation: SessionOperation) throws {
            seq += 1
            _ = try session.apply(operation, seq: seq, at: at)
        }
        func value() -> JSONValue { JSONValueSizeTests.randomValue(depth: 0, using: &random) }
        func screen(_ name: String) -> ScreenSeed {
            ScreenSeed(id: ScreenID("c_\(name)"), name: name, values: ["title": value(), "k.\(name)": value()])
        }
        try apply(.createStack(StackID("tab"), root: screen("tab0")))
        try apply(.push(StackID("tab"), screen("tab1")))
        let presenter = try #require(session.stack.entries.last?.id)
        try apply(.present(StackID("p_sheet"), style: .sheet, presenter: presenter, root: screen("sheet0")))
        try apply(.push(StackID("p_sheet"), screen("sheet1")))
        try apply(.updateValues(screen: presenter, set: ["title": value(), "draft": value()], removed: []))
        try apply(
            .present(StackID("p_cover"), style: .fullScreenCover, presenter: ScreenID("c_tab1"), root: screen("cover0"))
        )
        try apply(.setHandler(screen: ScreenID("c_sheet0"), key: "draft", passBack: true))
        try apply(.publish(screen: ScreenID("c_sheet1"), key: "draft", value: value()))
        try apply(.selectStack(StackID("tab")))
        let footprint = SessionFootprint(session)
        let rendered = session.resource()
        #expect(rendered.stacks.count == 3)
        #expect(footprint.sessionBytes == rendered.json.serialized().utf8.count)
        #expect(footprint.screenBytes == rendered.screens.map { $0.json.serialized().utf8.count })
    }

    @Test func aPathIsCountedBeforeItIsAppliedNeverUnderWhatItRenders() throws {
        let session = try Self.randomSession(seed: 99, operations: 10)
        var limits = SessionLimits()
        let seeds = (0..<30).map { ScreenSeed(id: ScreenID("c_p\($0)"), name: "p", values: ["k\($0)": .string("v")]) }
        let operation = SessionOperation.replacePath(
            .main, popped: session.stack.ids.dropFirst().reversed(), pushed: seeds)
        // Measure what it renders to, then set the limit one byte under it.
        let copy = try Self.randomSession(seed: 99, operations: 10)
        guard case .pathReplaced(_, let pushed) = try copy.apply(operation, seq: 100, at: Date()).event else {
            Issue.record("not a path event")
            return
        }
        let pushedBytes = ScreenResource.arrayBytes(pushed)
        // The event renders each pushed screen as it is pushed, when its `next` is still null;
        // the count links them, so it may be over by an id per screen, never under.
        limits.maxEventBytes = pushedBytes + 16 * seeds.count
        #expect(throws: Never.self) { try OutputLimits(limits: limits).preflight(operation, on: session) }
        limits.maxEventBytes = pushedBytes - 1
        let error = try #require(throws: SessionError.self) {
            try OutputLimits(limits: limits).preflight(operation, on: session)
        }
        #expect(error.code == .limitExceeded)
        #expect(error.limit == "max-event-bytes")
    }

    @Test func affectedAndDeliveriesAreNeverCountedUnderWhatTheEventLists() throws {
        for seed in 1...20 {
            let session = try Self.randomSession(seed: UInt64(seed), operations: 30)
            let root = session.stack.entries[0].id
            for operation in [
                SessionOperation.updateValues(screen: root, set: ["title": "x", "new": [1, 2, 3]], removed: ["k.1"]),
                .publish(screen: session.stack.entries[session.stack.count - 1].id, key: "k-2", value: "pref"),
            ] {
                let copy = try Self.randomSession(seed: UInt64(seed), operations: 30)
                let event = try copy.apply(operation, seq: 1_000, at: Date()).event
                let listed: Int
                switch event {
                case .valuesUpdated(_, _, _, let affected):
                    listed = JSONValue.array(affected.map(\.json)).serializedByteCount
                case .preferencePublished(_, _, _, let deliveries, _):
                    listed = JSONValue.array(deliveries.map(\.json)).serializedByteCount
                default:
                    Issue.record("unexpected event \(event)")
                    return
                }
                var limits = SessionLimits()
                limits.maxEventBytes = listed - 1
                #expect(throws: SessionError.self, "seed \(seed): \(operation)") {
                    try OutputLimits(limits: limits).preflight(operation, on: session)
                }
            }
        }
    }

    @Test func schemaDefaultsObeyTheValueLimitsAndTheirOwn() throws {
        var limits = SessionLimits()
        limits.maxValueBytes = 10
        limits.maxDefaultBytes = 12
        limits.maxSchemaEntries = 3
        func schema(_ defaults: [String: JSONValue]) -> SessionSchema {
            SessionSchema(
                values: defaults.mapValues { .init(type: .any, defaultValue: $0, isObservationIgnored: false) },
                preferences: [:], isStrict: false)
        }
        let large = try #require(throws: SessionError.self) { try limits.check(schema(["a": "0123456789ab"])) }
        #expect(large.code == .invalid)
        #expect(large.fieldErrors.map(\.pointer) == ["/values/a/default"])
        let total = try #require(throws: SessionError.self) {
            try limits.check(schema(["a": "01234567", "b": "0123"]))
        }
        #expect(total.code == .limitExceeded)
        #expect(total.limit == "max-default-bytes")
        let many = try #require(throws: SessionError.self) {
            try limits.check(schema(["a": 1, "b": 2, "c": 3, "d": 4]))
        }
        #expect(many.limit == "max-schema-entries")
        limits.maxNesting = 2
        let deep = try #require(throws: SessionError.self) { try limits.check(schema(["a": [[[1]]]])) }
        #expect(deep.fieldErrors.map(\.detail) == ["nested deeper than 2"])
        #expect(throws: Never.self) { try limits.check(schema(["a": "012345", "b": 1])) }
    }
}

extension ScreenResource {
    /// Bytes of a JSON array of these screens.
    static func arrayBytes(_ screens: [ScreenResource]) -> Int {
        JSONValue.array(screens.map(\.json)).serializedByteCount
    }
}
