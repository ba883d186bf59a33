import Foundation
import NavigationValues

/// A shape of the API whose JSON form is written once, by `json` and `init(json:pointer:)`, and is
/// `Codable` through them: encoding writes exactly what `json` does, decoding reads exactly what
/// `init(json:pointer:)` does, so `JSONEncoder`/`JSONDecoder` and the hand-written fast paths never
/// disagree.
///
/// ```swift
/// let session = try JSONDecoder().decode(SessionResource.self, from: body)
/// let data = try JSONEncoder().encode(session)   // the JSON `session.json` writes
/// ```
public protocol WireCodable: Codable {
    /// The value as the API writes it.
    var json: JSONValue { get }
    /// Decodes what `json` writes; `pointer` (RFC 6901) is where the value sits in a larger
    /// document, for the error.
    init(json: JSONValue, pointer: String) throws(WireDecodingError)
}

extension WireCodable {
    /// Decodes the value's JSON form with `init(json:pointer:)`.
    ///
    /// - Throws: `DecodingError.dataCorrupted` with the `WireDecodingError` (pointer and reason).
    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        do {
            try self.init(json: json, pointer: "")
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: error.description, underlyingError: error))
        }
    }

    /// Encodes `json`.
    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }
}

// Shapes whose decoder takes `pointer` already.
extension SessionSummary: WireCodable {}
extension SessionOrigin: WireCodable {}
extension ScreenResource: WireCodable {}
extension HandlerResource: WireCodable {}
extension SchemaResource: WireCodable {}
extension StackResource: WireCodable {}
extension AffectedValue: WireCodable {}
extension PreferenceDelivery: WireCodable {}
extension ReceivedEvent: WireCodable {}
extension ObserverResource: WireCodable {}

/// A document read whole, whose decoder places its errors at its root: `init(json:pointer:)`
/// places them below `pointer`.
public protocol WireDocument: WireCodable {
    /// Decodes what `json` writes.
    init(json: JSONValue) throws(WireDecodingError)
}

extension WireDocument {
    /// Decodes what `json` writes, its errors below `pointer`.
    public init(json: JSONValue, pointer: String) throws(WireDecodingError) {
        do {
            try self.init(json: json)
        } catch {
            throw WireDecodingError(pointer: pointer + error.pointer, reason: error.reason)
        }
    }
}

extension SessionResource: WireDocument {}
extension CreatedSession: WireDocument {}
extension SessionList: WireDocument {}
extension StackList: WireDocument {}
extension EventPage: WireDocument {}
extension HistoryPage: WireDocument {}
extension RecordedEvent: WireDocument {}
extension JSONPatch: WireDocument {}
extension CreatedObserver: WireDocument {}
extension ObserverList: WireDocument {}
extension StreamTicket: WireDocument {}

extension SessionEvent: WireCodable {
    /// Decodes what `json` writes: `{"type", …its fields}` (members it does not know, such as a
    /// recorded event's `seq` and `at`, are ignored).
    ///
    /// - Throws: `WireDecodingError` for an unknown type or a missing or mistyped field.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        let typeName = try fields.string("type")
        guard let kind = Kind(rawValue: typeName) else {
            throw WireDecodingError(pointer: fields.at("type"), reason: "unknown event type '\(typeName)'")
        }
        self = try RecordedEvent.event(kind, fields)
    }
}

extension UnrecognizedEvent: WireCodable {
    /// Keeps `json` whole, with its `seq` and `type`.
    ///
    /// - Throws: `WireDecodingError` when `seq` or `type` is missing or mistyped.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        self.init(seq: try fields.integer("seq"), type: try fields.string("type"), json: json)
    }
}

extension ProblemDocument: WireCodable {
    /// Decodes a problem document on its own (its `status` member, or 0 when it has none).
    public init(json: JSONValue, pointer: String) throws(WireDecodingError) {
        do {
            try self.init(json: json, status: 0)
        } catch {
            throw WireDecodingError(pointer: pointer + error.pointer, reason: error.reason)
        }
    }
}

extension MutationResult: Codable {
    /// Where a decoder finds the `Kind` of the answer it decodes (`JSONDecoder.userInfo`): an
    /// answer does not name its kind, its request does.
    // `CodingUserInfoKey(rawValue:)` accepts every string: it is never nil.
    public static let kindKey = CodingUserInfoKey(rawValue: "NavigationValuesWire.MutationResult.kind")!
    /// Where a decoder finds a batch's operations' kinds, `[Kind]`, in order.
    public static let operationKindsKey = CodingUserInfoKey(
        rawValue: "NavigationValuesWire.MutationResult.operations")!

    /// Decodes an answer as `init(json:kind:version:operations:)` does, its kind (and a batch's
    /// operations' kinds) taken from the decoder's `userInfo` under `kindKey` and
    /// `operationKindsKey`. `.ended` reads `{"version"}`.
    ///
    /// ```swift
    /// let decoder = JSONDecoder()
    /// decoder.userInfo[MutationResult.kindKey] = MutationResult.Kind.pushed
    /// let pushed = try decoder.decode(MutationResult.self, from: body)
    /// ```
    public init(from decoder: any Decoder) throws {
        guard let kind = decoder.userInfo[Self.kindKey] as? Kind else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath,
                    debugDescription: "an answer decodes as its kind: set userInfo[MutationResult.kindKey]"))
        }
        let operations = decoder.userInfo[Self.operationKindsKey] as? [Kind] ?? []
        let json = try JSONValue(from: decoder)
        do {
            try self.init(json: json, kind: kind, operations: operations)
        } catch {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "\(error)", underlyingError: error))
        }
    }

    /// Encodes the answer's body (`{"version"}` for `.ended`, which answers without one).
    public func encode(to encoder: any Encoder) throws {
        try (json ?? ["version": .integer(version)]).encode(to: encoder)
    }
}
