import NavigationValues
import NavigationValuesWire

/// Turns commands into operations, checking them against the session as it is now: shapes, types,
/// limits and references (API.md, Limits; SEMANTICS.md). An operation it returns always applies.
struct CommandValidator {
    let session: LiveSession
    let limits: SessionLimits
    let newScreenID: () -> ScreenID

    func operation(for command: SessionCommand) throws(SessionError) -> SessionOperation {
        switch command {
        case .end(let purge):
            return .end(purge: purge)
        case .push(let body):
            let fields = try object(body, allowed: ["name", "values"])
            guard session.depth < limits.maxScreens else {
                throw SessionError(.invalid, "a session holds at most \(limits.maxScreens) screens")
            }
            return .push(try seed(fields, pointer: ""))
        case .pop(let body):
            return .pop(try popped(body))
        case .replacePath(let body):
            return try replacePath(body)
        case .patchValues(let reference, let body):
            return try updateValues(reference, body)
        case .setHandler(let reference, let key, let body):
            let entry = try screen(reference)
            try checkPreferenceKey(key)
            let fields = try object(body, allowed: ["passBack"])
            guard let passBack = fields["passBack"]?.boolValue else {
                throw SessionError(.invalid, "expected boolean", pointer: "/passBack")
            }
            return .setHandler(screen: entry.id, key: key, passBack: passBack)
        case .removeHandler(let reference, let key):
            let entry = try screen(reference)
            guard entry.context.hasPreferenceHandler(named: key) else {
                throw SessionError(.notFound, "screen \(entry.id.rawValue) has no handler for '\(key)'")
            }
            return .removeHandler(screen: entry.id, key: key)
        case .publish(let reference, let key, let body):
            let entry = try screen(reference)
            try checkPreferenceKey(key)
            let fields = try object(body, allowed: ["value"])
            guard let value = fields["value"] else {
                throw SessionError(.invalid, "a preference needs a value", pointer: "/value")
            }
            if let problem = session.schema.checkPreference(value, for: key, pointer: "/value") {
                throw SessionError(.invalid, problem.detail, fieldErrors: [problem])
            }
            try checkSize(value, pointer: "/value")
            return .publish(screen: entry.id, key: key, value: value)
        }
    }

    /// Validates a create request's root as a push body; its pointers are inside `/root`.
    func root(_ body: JSONValue) throws(SessionError) -> ScreenSeed {
        do {
            return try seed(try object(body, allowed: ["name", "values"]), pointer: "")
        } catch {
            var error = error
            error.fieldErrors = error.fieldErrors.map { .init(pointer: "/root" + $0.pointer, detail: $0.detail) }
            throw error
        }
    }

    // MARK: - Operations

    private func replacePath(_ body: JSONValue) throws(SessionError) -> SessionOperation {
        let fields = try object(body, allowed: ["screens"])
        guard let list = fields["screens"]?.arrayValue else {
            throw SessionError(.invalid, "expected an array of screens", pointer: "/screens")
        }
        guard list.count + 1 <= limits.maxScreens else {
            throw SessionError(.invalid, "a session holds at most \(limits.maxScreens) screens", pointer: "/screens")
        }
        var seeds: [ScreenSeed] = []
        for (index, item) in list.enumerated() {
            let itemFields = try object(item, allowed: ["name", "values"], pointer: "/screens/\(index)")
            seeds.append(try seed(itemFields, pointer: "/screens/\(index)"))
        }
        return .replacePath(popped: session.stack.ids.dropFirst().reversed(), pushed: seeds)
    }

    private func updateValues(_ reference: String, _ body: JSONValue) throws(SessionError) -> SessionOperation {
        let entry = try screen(reference)
        guard case .object(let members) = body else {
            throw SessionError(.invalid, "expected an object of values", pointer: "")
        }
        var set: [String: JSONValue] = [:]
        var removed: [String] = []
        var problems: [SessionError.FieldError] = []
        for (name, value) in members {
            let pointer = "/\(JSONPointer.escaped(name))"
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
            throw SessionError(.invalid, "a screen holds at most \(limits.maxValuesPerScreen) values")
        }
        return .updateValues(screen: entry.id, set: set, removed: removed.sorted())
    }

    /// The screens a pop removes, topmost first.
    private func popped(_ body: JSONValue) throws(SessionError) -> [ScreenID] {
        let fields = try object(body, allowed: ["count", "to"])
        let above = session.stack.ids.dropFirst()
        switch (fields["count"], fields["to"]) {
        case (.some, .some):
            throw SessionError(.invalid, "give either count or to, not both", pointer: "/to")
        case (.some(let count), nil):
            guard let count = count.integerValue, count >= 1 else {
                throw SessionError(.invalid, "expected an integer of at least 1", pointer: "/count")
            }
            guard count <= above.count else {
                throw SessionError(
                    .conflict, "cannot pop \(count) screen(s): only \(above.count) above the root; the root stays")
            }
            return above.suffix(Int(count)).reversed()
        case (nil, .some(let to)):
            guard let reference = to.stringValue else {
                throw SessionError(.invalid, "expected a screen id, root or top", pointer: "/to")
            }
            let target = try screen(reference)
            guard let index = session.stack.index(of: target.id) else {
                throw SessionError(.notFound, "no screen '\(reference)'")
            }
            return session.stack.ids[(index + 1)...].reversed()
        case (nil, nil):
            // An empty body pops the topmost screen, like a back button.
            guard let top = above.last else {
                throw SessionError(.conflict, "only the root is left; the root cannot be popped")
            }
            return [top]
        }
    }

    // MARK: - Pieces

    func screen(_ reference: String) throws(SessionError) -> LiveSession.Screen {
        guard let entry = session.screen(reference: reference) else {
            throw SessionError(.notFound, "no screen '\(reference)' in session \(session.id.rawValue)")
        }
        return entry
    }

    private func seed(_ fields: [String: JSONValue], pointer: String) throws(SessionError) -> ScreenSeed {
        var name = ""
        if let given = fields["name"] {
            guard let text = given.stringValue, text.count <= limits.maxNameLength else {
                throw SessionError(
                    .invalid, "expected a string of at most \(limits.maxNameLength) characters",
                    pointer: "\(pointer)/name")
            }
            // PostgreSQL's text cannot hold U+0000, so neither store takes it (the same rule for both).
            guard !text.unicodeScalars.contains("\u{0}") else {
                throw SessionError(.invalid, "a screen name cannot contain U+0000", pointer: "\(pointer)/name")
            }
            name = text
        }
        var values: [String: JSONValue] = [:]
        if let given = fields["values"] {
            guard case .object(let members) = given else {
                throw SessionError(.invalid, "expected an object of values", pointer: "\(pointer)/values")
            }
            guard members.count <= limits.maxValuesPerScreen else {
                throw SessionError(
                    .invalid, "a screen holds at most \(limits.maxValuesPerScreen) values", pointer: "\(pointer)/values"
                )
            }
            var problems: [SessionError.FieldError] = []
            for (key, value) in members {
                let here = "\(pointer)/values/\(JSONPointer.escaped(key))"
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

    private func check(_ value: JSONValue, name: String, pointer: String) -> SessionError.FieldError? {
        session.schema.checkValue(value, for: name, pointer: pointer) ?? sizeProblem(value, pointer: pointer)
    }

    private func checkSize(_ value: JSONValue, pointer: String) throws(SessionError) {
        if let problem = sizeProblem(value, pointer: pointer) {
            throw SessionError(.invalid, problem.detail, fieldErrors: [problem])
        }
    }

    /// A value over the nesting or size limit (API.md, Limits).
    private func sizeProblem(_ value: JSONValue, pointer: String) -> SessionError.FieldError? {
        if value.depth > limits.maxNesting {
            return .init(pointer: pointer, detail: "nested deeper than \(limits.maxNesting)")
        }
        if value.serialized().utf8.count > limits.maxValueBytes {
            return .init(pointer: pointer, detail: "larger than \(limits.maxValueBytes) bytes of JSON")
        }
        return nil
    }

    private func checkPreferenceKey(_ key: String) throws(SessionError) {
        if let problem = KeyName.problem(with: key) {
            throw SessionError(.invalid, problem)
        }
        if session.schema.isStrict, session.schema.preferences[key] == nil {
            throw SessionError(.invalid, "undeclared preference key '\(key)' (strict schema)")
        }
    }

    private func object(
        _ body: JSONValue, allowed: Set<String>, pointer: String = ""
    ) throws(SessionError) -> [String: JSONValue] {
        guard case .object(let fields) = body else {
            throw SessionError(.invalid, "expected a JSON object", pointer: pointer)
        }
        let unknown = fields.keys.filter { !allowed.contains($0) }.sorted()
        guard unknown.isEmpty else {
            throw SessionError(
                .invalid, "unknown member(s): \(unknown.joined(separator: ", "))",
                fieldErrors: unknown.map {
                    .init(pointer: "\(pointer)/\(JSONPointer.escaped($0))", detail: "unknown member")
                })
        }
        return fields
    }

    private func throwIfAny(_ problems: [SessionError.FieldError]) throws(SessionError) {
        guard !problems.isEmpty else { return }
        let sorted = problems.sorted { $0.pointer < $1.pointer }
        throw SessionError(
            .invalid, sorted.count == 1 ? sorted[0].detail : "\(sorted.count) invalid values", fieldErrors: sorted)
    }
}
