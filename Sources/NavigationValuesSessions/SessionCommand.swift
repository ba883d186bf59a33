import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// Configurable limits (API.md, Limits).
public struct SessionLimits: Sendable, Equatable {
    public var maxScreens = 1_000
    public var maxValuesPerScreen = 1_000
    public var maxValueBytes = 64 * 1024
    public var maxNesting = 64
    public var maxNameLength = 256

    public init() {}
}

/// A request on one session, parsed from HTTP but not yet checked against the session.
package enum SessionCommand: Sendable {
    case get
    case getScreen(String)
    case end(purge: Bool)
    case push(JSONValue)
    case pop(JSONValue)
    case replacePath(JSONValue)
    case patchValues(screen: String, body: JSONValue)
    case setHandler(screen: String, key: String, body: JSONValue)
    case removeHandler(screen: String, key: String)
    case publish(screen: String, key: String, body: JSONValue)

    var isPurge: Bool {
        if case .end(purge: true) = self { true } else { false }
    }

    var isMutation: Bool {
        switch self {
        case .get, .getScreen: false
        default: true
        }
    }
}

/// Turns commands into operations, checking them against the session as it is now.
struct CommandValidator {
    let session: LiveSession
    let limits: SessionLimits
    let newScreenID: () -> ScreenID

    func operation(for command: SessionCommand) throws(APIError) -> Operation {
        switch command {
        case .get, .getScreen:
            preconditionFailure("reads are not operations")
        case .end(let purge):
            return .end(purge: purge)
        case .push(let body):
            let fields = try object(body, allowed: ["name", "values"])
            guard session.depth < limits.maxScreens else {
                throw APIError(.unprocessable, "a session holds at most \(limits.maxScreens) screens")
            }
            return .push(try seed(fields, pointer: ""))
        case .pop(let body):
            return .pop(try popped(body))
        case .replacePath(let body):
            let fields = try object(body, allowed: ["screens"])
            guard let list = fields["screens"]?.arrayValue else {
                throw APIError(.unprocessable, "expected an array of screens", pointer: "/screens")
            }
            guard list.count + 1 <= limits.maxScreens else {
                throw APIError(.unprocessable, "a session holds at most \(limits.maxScreens) screens", pointer: "/screens")
            }
            var seeds: [ScreenSeed] = []
            for (index, item) in list.enumerated() {
                let itemFields = try object(item, allowed: ["name", "values"], pointer: "/screens/\(index)")
                seeds.append(try seed(itemFields, pointer: "/screens/\(index)"))
            }
            return .replacePath(popped: session.screens.dropFirst().reversed().map(\.id), pushed: seeds)
        case .patchValues(let reference, let body):
            let entry = try screen(reference)
            guard case .object(let members) = body else {
                throw APIError(.unprocessable, "expected an object of values", pointer: "")
            }
            var set: [String: JSONValue] = [:]
            var removed: [String] = []
            var problems: [APIError.FieldError] = []
            for (name, value) in members {
                let pointer = "/\(pointerEscaped(name))"
                if value == .null {
                    if let problem = KeyName.problem(with: name) {
                        problems.append(.init(pointer: pointer, detail: problem))
                    } else {
                        removed.append(name)
                    }
                } else if let problem = check(value, name: name, pointer: pointer) {
                    problems.append(problem)
                } else {
                    set[name] = value
                }
            }
            try throwIfAny(problems)
            let existing = entry.context.localNamedValues.count
            let added = set.keys.filter { entry.context.localNamedValues[$0] == nil }.count
            guard existing + added <= limits.maxValuesPerScreen else {
                throw APIError(.unprocessable, "a screen holds at most \(limits.maxValuesPerScreen) values")
            }
            return .updateValues(screen: entry.id, set: set, removed: removed)
        case .setHandler(let reference, let key, let body):
            let entry = try screen(reference)
            try checkPreferenceKey(key)
            let fields = try object(body, allowed: ["passBack"])
            guard let passBack = fields["passBack"]?.boolValue else {
                throw APIError(.unprocessable, "expected boolean", pointer: "/passBack")
            }
            return .setHandler(screen: entry.id, key: key, passBack: passBack)
        case .removeHandler(let reference, let key):
            let entry = try screen(reference)
            guard entry.context.hasPreferenceHandler(named: key) else {
                throw APIError(.notFound, "screen \(entry.id.rawValue) has no handler for '\(key)'")
            }
            return .removeHandler(screen: entry.id, key: key)
        case .publish(let reference, let key, let body):
            let entry = try screen(reference)
            try checkPreferenceKey(key)
            let fields = try object(body, allowed: ["value"])
            guard let value = fields["value"] else {
                throw APIError(.unprocessable, "a preference needs a value", pointer: "/value")
            }
            if let problem = session.schema.checkPreference(value, for: key, pointer: "/value") {
                throw APIError(.unprocessable, problem.detail, errors: [problem])
            }
            try checkSize(value, pointer: "/value")
            return .publish(screen: entry.id, key: key, value: value)
        }
    }

    // MARK: - Pieces

    func screen(_ reference: String) throws(APIError) -> ScreenEntry {
        guard let entry = session.screen(reference: reference) else {
            throw APIError(.notFound, "no screen '\(reference)' in session \(session.id.rawValue)")
        }
        return entry
    }

    private func popped(_ body: JSONValue) throws(APIError) -> [ScreenID] {
        let fields = try object(body, allowed: ["count", "to"])
        let above = session.screens.dropFirst()
        switch (fields["count"], fields["to"]) {
        case (.some, .some):
            throw APIError(.unprocessable, "give either count or to, not both", pointer: "/to")
        case (.some(let count), nil):
            guard let count = count.integerValue, count >= 1 else {
                throw APIError(.unprocessable, "expected an integer of at least 1", pointer: "/count")
            }
            guard count <= above.count else {
                throw APIError(
                    .conflict, "cannot pop \(count) screen(s): only \(above.count) above the root; the root stays")
            }
            return above.suffix(Int(count)).reversed().map(\.id)
        case (nil, .some(let to)):
            guard let reference = to.stringValue else {
                throw APIError(.unprocessable, "expected a screen id, root or top", pointer: "/to")
            }
            let target = try screen(reference)
            guard let index = session.screens.firstIndex(where: { $0.id == target.id }) else {
                throw APIError(.notFound, "no screen '\(reference)'")
            }
            return session.screens[(index + 1)...].reversed().map(\.id)
        case (nil, nil):
            // An empty body pops the topmost screen, like a back button.
            guard !above.isEmpty else { throw APIError(.conflict, "only the root is left; the root cannot be popped") }
            return [above[above.endIndex - 1].id]
        }
    }

    private func seed(_ fields: [String: JSONValue], pointer: String) throws(APIError) -> ScreenSeed {
        var name = ""
        if let given = fields["name"] {
            guard let text = given.stringValue, text.count <= limits.maxNameLength else {
                throw APIError(
                    .unprocessable, "expected a string of at most \(limits.maxNameLength) characters",
                    pointer: "\(pointer)/name")
            }
            name = text
        }
        var values: [String: JSONValue] = [:]
        if let given = fields["values"] {
            guard case .object(let members) = given else {
                throw APIError(.unprocessable, "expected an object of values", pointer: "\(pointer)/values")
            }
            guard members.count <= limits.maxValuesPerScreen else {
                throw APIError(
                    .unprocessable, "a screen holds at most \(limits.maxValuesPerScreen) values",
                    pointer: "\(pointer)/values")
            }
            var problems: [APIError.FieldError] = []
            for (key, value) in members {
                let here = "\(pointer)/values/\(pointerEscaped(key))"
                if value == .null { continue }  // null means "no override"
                if let problem = check(value, name: key, pointer: here) {
                    problems.append(problem)
                } else {
                    values[key] = value
                }
            }
            try throwIfAny(problems)
        }
        return ScreenSeed(id: newScreenID(), name: name, values: values)
    }

    private func check(_ value: JSONValue, name: String, pointer: String) -> APIError.FieldError? {
        session.schema.checkValue(value, for: name, pointer: pointer) ?? sizeProblem(value, pointer: pointer)
    }

    private func checkSize(_ value: JSONValue, pointer: String) throws(APIError) {
        if let problem = sizeProblem(value, pointer: pointer) {
            throw APIError(.unprocessable, problem.detail, errors: [problem])
        }
    }

    /// A value over the nesting or size limit (API.md, Limits).
    private func sizeProblem(_ value: JSONValue, pointer: String) -> APIError.FieldError? {
        if value.depth > limits.maxNesting {
            return .init(pointer: pointer, detail: "nested deeper than \(limits.maxNesting)")
        }
        if value.serialized().utf8.count > limits.maxValueBytes {
            return .init(pointer: pointer, detail: "larger than \(limits.maxValueBytes) bytes of JSON")
        }
        return nil
    }

    private func checkPreferenceKey(_ key: String) throws(APIError) {
        if let problem = KeyName.problem(with: key) {
            throw APIError(.unprocessable, problem)
        }
        if session.schema.isStrict, session.schema.preferences[key] == nil {
            throw APIError(.unprocessable, "undeclared preference key '\(key)' (strict schema)")
        }
    }

    private func object(
        _ body: JSONValue, allowed: Set<String>, pointer: String = ""
    ) throws(APIError) -> [String: JSONValue] {
        guard case .object(let fields) = body else {
            throw APIError(.unprocessable, "expected a JSON object", pointer: pointer)
        }
        let unknown = fields.keys.filter { !allowed.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw APIError(
                .unprocessable, "unknown member(s): \(unknown.joined(separator: ", "))",
                errors: unknown.map { .init(pointer: "\(pointer)/\(pointerEscaped($0))", detail: "unknown member") })
        }
        return fields
    }

    private func throwIfAny(_ problems: [APIError.FieldError]) throws(APIError) {
        guard !problems.isEmpty else { return }
        let sorted = problems.sorted { $0.pointer < $1.pointer }
        throw APIError(.unprocessable, sorted.count == 1 ? sorted[0].detail : "\(sorted.count) invalid values", errors: sorted)
    }
}
