import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions
import NavigationValuesWire
import TestSupport
import Testing

/// A schema with a typed, an observation-ignored and a preference entry, for random histories.
let randomHistorySchema: JSONValue = [
    "values": [
        "title": ["type": "string", "default": "t"], "draft": ["type": "any", "observationIgnored": true],
    ],
    "preferences": ["pick": ["type": "string", "default": ""]],
]

extension TestSession {
    /// Sends `count` random requests (push, pop, values, handlers, publishes, path replaces) and
    /// returns how many were applied (some pops and handler removals are refused).
    @discardableResult
    func applyRandomRequests(_ count: Int, seed: UInt64) async throws -> Int {
        var random = SplitMix64(state: seed)
        let keys = ["title", "draft", "n"]
        let values: [JSONValue] = ["a", "b", 1, .null, ["x": [1, 2]]]
        var applied = 0
        for _ in 0..<count {
            let screen = ["root", "top"][Int.random(in: 0..<2, using: &random)]
            let result: HTTPResponse
            switch Int.random(in: 0..<8, using: &random) {
            case 0, 1:
                result = try await send("POST", "/push", json: ["name": "S", "values": ["n": 1]])
            case 2:
                result = try await send("POST", "/pop", json: ["count": 1])
            case 3:
                let key = keys[Int.random(in: 0..<keys.count, using: &random)]
                let value = values[Int.random(in: 0..<values.count, using: &random)]
                result = try await send("PATCH", "/screens/\(screen)/values", json: [key: value])
            case 4:
                let passBack = Bool.random(using: &random)
                result = try await send("PUT", "/screens/\(screen)/handlers/pick", json: ["passBack": .bool(passBack)])
            case 5:
                result = try await send("DELETE", "/screens/\(screen)/handlers/pick")
            case 6:
                let value = ["p", "q", "r"][Int.random(in: 0..<3, using: &random)]
                result = try await send(
                    "POST", "/screens/\(screen)/preferences/pick", json: ["value": .string(value)])
            default:
                result = try await send(
                    "PUT", "/path", json: ["screens": [["name": "P1"], ["name": "P2", "values": ["title": "deep"]]]])
            }
            if (200..<300).contains(result.status) { applied += 1 }
        }
        return applied
    }

    /// The session replayed at `version`.
    func replay(at version: Int64) async throws -> JSONValue {
        let answer = try await send("GET", "/replay?at=\(version)")
        try #require(answer.status == 200, "replay at \(version): \(answer.status)")
        return try #require(answer.json)
    }

    /// Every event, from the history pages (however many).
    func everyEvent() async throws -> [JSONValue] {
        var events: [JSONValue] = []
        var after: Int64 = 0
        while true {
            let page = try await send("GET", "/history?after=\(after)&limit=1000")
            try #require(page.status == 200)
            events += page.json?["events"]?.arrayValue ?? []
            guard let next = page.json?["next"]?.integerValue else { return events }
            after = next
        }
    }
}

/// `value` with every string of `map`'s keys replaced by its value, everywhere (ids of one
/// session rewritten as those of its copy).
func replacingStrings(_ map: [String: String], in value: JSONValue) -> JSONValue {
    switch value {
    case .string(let text): .string(map[text] ?? text)
    case .array(let items): .array(items.map { replacingStrings(map, in: $0) })
    case .object(let members): .object(members.mapValues { replacingStrings(map, in: $0) })
    default: value
    }
}

/// The ids a copy gave a session's screens, from the two sessions' events in order: each
/// pushed screen (and root) of one against the same of the other.
func screenIDMap(from original: [JSONValue], to copy: [JSONValue]) -> [String: String] {
    var map: [String: String] = [:]
    func pushed(_ event: JSONValue) -> [String] {
        var screens: [JSONValue] = []
        if let root = event["root"] { screens.append(root) }
        if let screen = event["screen"], screen.objectValue != nil { screens.append(screen) }
        screens += event["pushed"]?.arrayValue ?? []
        return screens.compactMap { $0["id"]?.stringValue }
    }
    for (left, right) in zip(original, copy) {
        for (old, new) in zip(pushed(left), pushed(right)) { map[old] = new }
    }
    return map
}
