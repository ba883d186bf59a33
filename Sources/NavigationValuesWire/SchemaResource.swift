import NavigationValues

/// A session's schema as docs/API.md writes it (Schema): declared value and preference entries, each
/// with a type and a default, and whether undeclared keys are refused.
///
/// ```swift
/// var schema = SchemaResource()
/// schema.values["title"] = .init(type: .string, defaultValue: "")
/// schema.json   // {"preferences": {}, "strict": false, "values": {"title": {"default": "", "type": "string"}}}
/// ```
///
/// The server checks a schema when a session is created; this type only carries it. Decoding is
/// additive: members it does not know are ignored, and a type it does not know is kept as written.
public struct SchemaResource: Sendable, Equatable {
    /// An entry's JSON type (`string`, `integer`, `number`, `boolean`, `object`, `array`, `any`).
    public struct EntryType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The type's name in the schema.
        public var rawValue: String
        /// A type with this name (one the server may not know).
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The type's name.
        public var description: String { rawValue }

        /// A JSON string.
        public static let string = EntryType(rawValue: "string")
        /// A whole JSON number.
        public static let integer = EntryType(rawValue: "integer")
        /// Any JSON number.
        public static let number = EntryType(rawValue: "number")
        /// `true` or `false`.
        public static let boolean = EntryType(rawValue: "boolean")
        /// A JSON object.
        public static let object = EntryType(rawValue: "object")
        /// A JSON array.
        public static let array = EntryType(rawValue: "array")
        /// Any JSON value.
        public static let any = EntryType(rawValue: "any")

        /// The type of a JSON value (`null` is `any`).
        public static func of(_ value: JSONValue) -> EntryType {
            value == .null ? .any : EntryType(rawValue: value.typeName)
        }
    }

    /// One declared entry: its type, what it reads before anything is written, and (for values)
    /// whether its changes notify no one (docs/SEMANTICS.md §2, observation-ignored).
    public struct Entry: Sendable, Equatable {
        /// The JSON type its values must have.
        public var type: EntryType
        /// What it reads before anything is written (`default`).
        public var defaultValue: JSONValue
        /// Whether its changes notify no one (`observationIgnored`).
        public var isObservationIgnored: Bool

        /// An entry.
        public init(type: EntryType, defaultValue: JSONValue = .null, isObservationIgnored: Bool = false) {
            self.type = type
            self.defaultValue = defaultValue
            self.isObservationIgnored = isObservationIgnored
        }
    }

    /// The declared forward values, by name.
    public var values: [String: Entry]
    /// The declared preferences, by name.
    public var preferences: [String: Entry]
    /// With `strict`, an undeclared key is refused (422).
    public var isStrict: Bool

    /// Nothing declared, not strict: what a session without a schema has.
    public init(values: [String: Entry] = [:], preferences: [String: Entry] = [:], isStrict: Bool = false) {
        self.values = values
        self.preferences = preferences
        self.isStrict = isStrict
    }

    /// The schema as JSON, as the server writes it in answers and events.
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

    /// Decodes what `json` writes; missing members read as nothing declared and not strict.
    ///
    /// - Throws: `WireDecodingError` naming the first member that has the wrong type.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        func entries(_ name: String) throws(WireDecodingError) -> [String: Entry] {
            guard fields.members[name] != nil else { return [:] }
            var result: [String: Entry] = [:]
            for (key, declaration) in try fields.object(name) {
                let entry = try JSONObjectReader(declaration, at: fields.at(name) + "/" + JSONPointer.escaped(key))
                let ignored = entry.members["observationIgnored"] == nil ? false : try entry.bool("observationIgnored")
                result[key] = Entry(
                    type: EntryType(rawValue: try entry.string("type")),
                    defaultValue: entry.members["default"] ?? .null,
                    isObservationIgnored: ignored)
            }
            return result
        }
        let strict = fields.members["strict"] == nil ? false : try fields.bool("strict")
        self.init(values: try entries("values"), preferences: try entries("preferences"), isStrict: strict)
    }
}
