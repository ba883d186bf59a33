/// Writes JSON text straight to bytes, member by member, for shapes whose members are known: no
/// `JSONValue` tree on the way. The text is the one `JSONValue.serialized()` writes for the same
/// value, provided each object's members are given sorted by name (as `serialized()` sorts them;
/// for ASCII names, byte order): the callers' tests compare the two for every shape.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.key("a"); writer.integer(1)
/// writer.key("b"); writer.string("x")
/// writer.endObject()
/// writer.bytes   // {"a":1,"b":"x"}
/// ```
package struct JSONWriter {
    package var bytes: [UInt8]
    /// Whether the next value (or key) follows another in its array (or object): then a comma
    /// goes first.
    private var needsComma = false

    /// A writer with room for `capacity` bytes (an event or an answer of a few hundred bytes).
    package init(capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    package mutating func beginObject() { open(UInt8(ascii: "{")) }
    package mutating func endObject() { close(UInt8(ascii: "}")) }
    package mutating func beginArray() { open(UInt8(ascii: "[")) }
    package mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        needsComma = false
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        needsComma = true
    }

    /// A member's name, then its value (the next call). `name` is plain ASCII that needs no escape.
    package mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// A member's name that may need escapes (a key of a map), then its value.
    package mutating func key(named name: String) {
        separate()
        JSONValue.writeString(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    package mutating func string(_ value: String) {
        separate()
        JSONValue.writeString(value, to: &bytes)
        needsComma = true
    }

    /// A string, or `null` when nil.
    package mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    package mutating func integer(_ value: Int64) {
        separate()
        JSONValue.writeInteger(value, to: &bytes)
        needsComma = true
    }

    package mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    package mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    package mutating func value(_ value: JSONValue) {
        separate()
        value.write(to: &bytes)
        needsComma = true
    }

    /// A value `write` appends as JSON text itself (a string it quotes, a number).
    package mutating func value(writtenBy write: (inout [UInt8]) -> Void) {
        separate()
        write(&bytes)
        needsComma = true
    }

    /// An object of `members`, sorted by name as `serialized()` sorts them.
    package mutating func object(_ members: [String: JSONValue]) {
        beginObject()
        JSONValue.writeMembers(members, to: &bytes)
        endObject()
    }

    /// An array of strings.
    package mutating func strings(_ values: [String]) {
        beginArray()
        for value in values { string(value) }
        endArray()
    }
}
