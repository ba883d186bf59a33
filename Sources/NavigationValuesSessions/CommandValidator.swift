import NavigationValues
import NavigationValuesWire

/// Turns commands into operations, checking them against the session as it is now: shapes, types,
/// limits and references (docs/API.md, Limits; docs/SEMANTICS.md). An operation it returns always applies.
struct CommandValidator {
    let session: LiveSession
    let limits: SessionLimits
    let newScreenID: () -> ScreenID

    func operation(for command: SessionCommand) throws(SessionError) -> SessionOperation {
        switch command {
        case .end(let purge): return .end(purge: purge)
        case .push(let stack, let body): return try push(body, onto: stack)
        case .pop(let stack, let body): return try pop(body, from: stack)
        case .replacePath(let stack, let body): return try replacePath(body, of: stack)
        case .patchValues(let reference, let body): return try updateValues(reference, body)
        case .setHandler(let reference, let key, let body): return try setHandler(reference, key, body)
        case .removeHandler(let reference, let key): return try removeHandler(reference, key)
        case .publish(let reference, let key, let body): return try publish(reference, key, body)
        case .createStack(let body): return try createStack(body)
        case .selectStack(let body): return try selectStack(body)
        case .removeStack(let reference): return try removeStack(reference)
        case .moveStack(let reference, let body): return try moveStack(reference, body)
        case .present(let body): return try present(body)
        case .dismiss(let body): return try dismiss(body)
        case .replaceAbove(let screen, let body): return try replaceAbove(screen, body)
        case .returnResult(let screen, let body): return try returnResult(screen, body)
        case .batch: throw SessionError(.invalid, "a batch cannot hold a batch")
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

    private func setHandler(_ reference: String, _ key: String, _ body: JSONValue) throws(SessionError)
        -> SessionOperation
    {
        let entry = try screen(reference)
        try checkPreferenceKey(key)
        let fields = try object(body, allowed: ["passBack"])
        guard let passBack = fields["passBack"]?.boolValue else {
            throw SessionError(.invalid, "expected boolean", pointer: "/passBack")
        }
        return .setHandler(screen: entry.id, key: key, passBack: passBack)
    }

    private func removeHandler(_ reference: String, _ key: String) throws(SessionError) -> SessionOperation {
        let entry = try screen(reference)
        guard entry.context.hasPreferenceHandler(named: key) else {
            throw SessionError(.notFound, "screen \(entry.id.rawValue) has no handler for '\(key)'")
        }
        return .removeHandler(screen: entry.id, key: key)
    }

    private func publish(_ reference: String, _ key: String, _ body: JSONValue) throws(SessionError)
        -> SessionOperation
    {
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

    // MARK: - Pieces

    func screen(_ reference: String) throws(SessionError) -> LiveSession.Screen {
        guard let entry = session.screen(reference: reference) else {
            throw SessionError(.notFound, "no screen '\(reference)' in session \(session.id.rawValue)")
        }
        return entry
    }

    func seed(_ fields: [String: JSONValue], pointer: String) throws(SessionError) -> ScreenSeed {
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
                if value == .null {
                    // Null means "no override", for a key name that could be one (as a patch checks it).
                    if let problem = KeyName.problem(with: key) {
                        problems.append(.init(pointer: here, detail: problem))
                    }
                    continue
                }
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

    func check(_ value: JSONValue, name: String, pointer: String) -> SessionError.FieldError? {
        session.schema.checkValue(value, for: name, pointer: pointer) ?? sizeProblem(value, pointer: pointer)
    }

    func checkSize(_ value: JSONValue, pointer: String) throws(SessionError) {
        if let problem = sizeProblem(value, pointer: pointer) {
            throw SessionError(.invalid, problem.detail, fieldErrors: [problem])
        }
    }

    /// A value over the nesting or size limit (docs/API.md, Limits).
    private func sizeProblem(_ value: JSONValue, pointer: String) -> SessionError.FieldError? {
        if value.depth > limits.maxNesting {
            return .init(pointer: pointer, detail: "nested deeper than \(limits.maxNesting)")
        }
        if value.serialized().utf8.count > limits.maxValueBytes {
            return .init(pointer: pointer, detail: "larger than \(limits.maxValueBytes) bytes of JSON")
        }
        return nil
    }

    func checkPreferenceKey(_ key: String) throws(SessionError) {
        if let problem = KeyName.problem(with: key) {
            throw SessionError(.invalid, problem)
        }
        if session.schema.isStrict, session.schema.preferences[key] == nil {
            throw SessionError(.invalid, "undeclared preference key '\(key)' (strict schema)")
        }
    }

    func object(
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

    func throwIfAny(_ problems: [SessionError.FieldError]) throws(SessionError) {
        guard !problems.isEmpty else { return }
        let sorted = problems.sorted { $0.pointer < $1.pointer }
        throw SessionError(
            .invalid, sorted.count == 1 ? sorted[0].detail : "\(sorted.count) invalid values", fieldErrors: sorted)
    }
}
