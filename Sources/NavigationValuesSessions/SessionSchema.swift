import NavigationValues
import NavigationValuesWire

/// A session's typed entries (docs/API.md, Schema).
///
/// ```json
/// {"values": {"title": {"type": "string", "default": ""}}, "preferences": {}, "strict": true}
/// ```
public struct SessionSchema: Sendable, Equatable {
    /// The JSON types an entry may declare.
    public enum ValueType: String, Sendable, CaseIterable {
        case string, integer, number, boolean, object, array, any

        /// Whether `value` has this type; `null` fits none but `any` (and is used to remove a value).
        func accepts(_ value: JSONValue) -> Bool {
            switch (self, value) {
            case (.any, _): true
            case (.string, .string), (.boolean, .bool), (.integer, .integer), (.object, .object), (.array, .array):
                true
            case (.integer, .number(let number)): number.rounded() == number && abs(number) < 9.2e18
            case (.number, .integer), (.number, .number): true
            default: false
            }
        }
    }

    /// One declared entry.
    public struct Entry: Sendable, Equatable {
        public var type: ValueType
        public var defaultValue: JSONValue
        public var isObservationIgnored: Bool
    }

    public var values: [String: Entry]
    public var preferences: [String: Entry]
    public var isStrict: Bool

    /// No schema: not strict, nothing declared.
    public static let empty = SessionSchema(values: [:], preferences: [:], isStrict: false)

    public init(values: [String: Entry], preferences: [String: Entry], isStrict: Bool) {
        self.values = values
        self.preferences = preferences
        self.isStrict = isStrict
    }

    /// Parses and checks a schema document; `pointer` is where it sits in the request body.
    ///
    /// - Throws: `SessionError` `.invalid` listing every problem found.
    public init(json: JSONValue, pointer: String = "/schema") throws(SessionError) {
        guard case .object(let members) = json else {
            throw SessionError(.invalid, "schema must be an object", pointer: pointer)
        }
        var problems: [SessionError.FieldError] = []
        for name in members.keys where !["values", "preferences", "strict"].contains(name) {
            problems.append(.init(pointer: "\(pointer)/\(JSONPointer.escaped(name))", detail: "unknown schema member"))
        }
        var isStrict = false
        if let strict = members["strict"] {
            if let flag = strict.boolValue {
                isStrict = flag
            } else {
                problems.append(.init(pointer: "\(pointer)/strict", detail: "expected boolean"))
            }
        }
        let values = Self.entries(members["values"], pointer: "\(pointer)/values", problems: &problems)
        let preferences = Self.entries(members["preferences"], pointer: "\(pointer)/preferences", problems: &problems)
        guard problems.isEmpty else {
            throw SessionError(
                .invalid, problems.count == 1 ? problems[0].detail : "invalid schema", fieldErrors: problems)
        }
        self.init(values: values, preferences: preferences, isStrict: isStrict)
    }

    private static func entries(
        _ json: JSONValue?, pointer: String, problems: inout [SessionError.FieldError]
    ) -> [String: Entry] {
        guard let json else { return [:] }
        guard case .object(let declared) = json else {
            problems.append(.init(pointer: pointer, detail: "expected an object of entries"))
            return [:]
        }
        var result: [String: Entry] = [:]
        for (name, declaration) in declared {
            let here = "\(pointer)/\(JSONPointer.escaped(name))"
            if let problem = KeyName.problem(with: name) {
                problems.append(.init(pointer: here, detail: problem))
                continue
            }
            guard case .object(let fields) = declaration else {
                problems.append(.init(pointer: here, detail: "expected an object with a type"))
                continue
            }
            guard let typeName = fields["type"]?.stringValue, let type = ValueType(rawValue: typeName) else {
                let allowed = ValueType.allCases.map(\.rawValue).joined(separator: ", ")
                problems.append(.init(pointer: "\(here)/type", detail: "expected one of \(allowed)"))
                continue
            }
            let defaultValue = fields["default"] ?? .null
            // A null default (or none) means the key reads null until written, whatever its type;
            // `json` writes it back as null, so parsing that output must accept it.
            if defaultValue != .null, !type.accepts(defaultValue) {
                problems.append(.init(pointer: "\(here)/default", detail: "expected \(type.rawValue)"))
                continue
            }
            var ignored = false
            if let flag = fields["observationIgnored"] {
                guard let value = flag.boolValue else {
                    problems.append(.init(pointer: "\(here)/observationIgnored", detail: "expected boolean"))
                    continue
                }
                ignored = value
            }
            for field in fields.keys where !["type", "default", "observationIgnored"].contains(field) {
                problems.append(.init(pointer: "\(here)/\(JSONPointer.escaped(field))", detail: "unknown entry member"))
            }
            result[name] = Entry(type: type, defaultValue: defaultValue, isObservationIgnored: ignored)
        }
        return result
    }

    /// The schema as JSON, as answers and events show it.
    public var json: JSONValue {
        func encode(_ entries: [String: Entry]) -> JSONValue {
            .object(
                entries.mapValues { entry in
                    var fields: [String: JSONValue] = [
                        "type": .string(entry.type.rawValue), "default": entry.defaultValue,
                    ]
                    if entry.isObservationIgnored { fields["observationIgnored"] = true }
                    return .object(fields)
                })
        }
        return ["values": encode(values), "preferences": encode(preferences), "strict": .bool(isStrict)]
    }

    // MARK: - Checking values

    /// The named key for a value entry, or nil with strict schemas when it is not declared.
    func valueKey(_ name: String) -> NamedValueKey? {
        if let entry = values[name] {
            return NamedValueKey(
                name, defaultValue: entry.defaultValue, isObservationIgnored: entry.isObservationIgnored)
        }
        return isStrict ? nil : NamedValueKey(name)
    }

    /// Checks a value written to a value key; `pointer` names it in the body.
    func checkValue(_ value: JSONValue, for name: String, pointer: String) -> SessionError.FieldError? {
        if let problem = KeyName.problem(with: name) { return .init(pointer: pointer, detail: problem) }
        guard let entry = values[name] else {
            return isStrict ? .init(pointer: pointer, detail: "undeclared value key '\(name)' (strict schema)") : nil
        }
        return entry.type.accepts(value)
            ? nil : .init(pointer: pointer, detail: "value '\(name)': expected \(entry.type.rawValue)")
    }

    /// Checks a published preference value.
    func checkPreference(_ value: JSONValue, for name: String, pointer: String) -> SessionError.FieldError? {
        if let problem = KeyName.problem(with: name) { return .init(pointer: pointer, detail: problem) }
        guard let entry = preferences[name] else {
            return isStrict
                ? .init(pointer: pointer, detail: "undeclared preference key '\(name)' (strict schema)") : nil
        }
        return entry.type.accepts(value)
            ? nil : .init(pointer: pointer, detail: "preference '\(name)': expected \(entry.type.rawValue)")
    }
}

/// Key names: 1-128 characters of `[A-Za-z0-9_.-]` (docs/API.md, Limits).
enum KeyName {
    static func problem(with name: String) -> String? {
        guard !name.isEmpty, name.utf8.count <= 128 else { return "key names are 1-128 characters" }
        let allowed = name.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte == 0x2E || byte == 0x2D
        }
        return allowed ? nil : "key names use only A-Z, a-z, 0-9, '_', '.', '-'"
    }
}
