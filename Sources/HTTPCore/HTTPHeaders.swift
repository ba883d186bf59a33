/// An ordered list of header fields whose names compare case-insensitively (RFC 9110 §5.1).
///
/// ```swift
/// var headers: HTTPHeaders = ["Content-Type": "application/json"]
/// headers["content-type"]          // "application/json"
/// headers.add(name: "Vary", value: "Accept")
/// ```
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// One header field as received or to be sent.
    public struct Field: Sendable, Equatable {
        /// The field name as given (compared case-insensitively).
        public var name: String
        /// The field value, without surrounding whitespace.
        public var value: String

        /// Creates a field.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    /// Creates an empty header list.
    public init() { fields = [] }

    /// Creates headers from a literal, keeping its order.
    public init(dictionaryLiteral elements: (String, String)...) {
        fields = elements.map { Field(name: $0.0, value: $0.1) }
    }

    /// The first value of the field `name` (any case), or nil. Setting replaces every field of that name;
    /// setting nil removes them.
    public subscript(name: String) -> String? {
        get {
            for field in fields where field.name.equalsIgnoringASCIICase(name) { return field.value }
            return nil
        }
        set {
            remove(name: name)
            if let newValue { fields.append(Field(name: name, value: newValue)) }
        }
    }

    /// Every value of the field `name` (any case), in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// Whether a field of that name is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// Appends a field, keeping any others of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field of that name.
    public mutating func remove(name: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Makes room for `capacity` fields in all, so that adding up to that many allocates no more.
    public mutating func reserveCapacity(_ capacity: Int) {
        fields.reserveCapacity(capacity)
    }

    /// Removes every field, keeping the array's room when it holds `limit` fields or fewer.
    package mutating func removeAll(keepingCapacityUpTo limit: Int) {
        fields.removeAll(keepingCapacity: fields.capacity <= limit)
    }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }
}

extension StringProtocol {
    /// ASCII case-insensitive comparison; header names and tokens are ASCII (RFC 9110 §5.1).
    /// Inlinable, so that other modules (the server's encoder, the routes) get it specialized for
    /// their types rather than calling the generic one, which reads each byte through witnesses.
    @inlinable
    package func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var left = utf8.makeIterator()
        var right = other.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let a?, let b?):
                if a == b { continue }
                if a | 0x20 != b | 0x20 { return false }
                let lower = a | 0x20
                if lower < UInt8(ascii: "a") || lower > UInt8(ascii: "z") { return false }
            default: return false
            }
        }
    }

    func trimmingASCIIWhitespace() -> Substring {
        let whole = Substring(self)
        var start = whole.startIndex
        var end = whole.endIndex
        while start < end, whole[start] == " " || whole[start] == "\t" { start = whole.index(after: start) }
        while end > start {
            let before = whole.index(before: end)
            guard whole[before] == " " || whole[before] == "\t" else { break }
            end = before
        }
        return whole[start..<end]
    }
}
