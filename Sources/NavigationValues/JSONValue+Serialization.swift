extension JSONValue {
    /// The value as compact JSON text, object members sorted by name so that equal values always
    /// serialize to the same text.
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    /// The same text as ``serialized()``, as its UTF-8 bytes (for a response body: no string on
    /// the way).
    package func serializedBytes() -> [UInt8] {
        var output: [UInt8] = []
        // Room for an event or a small answer at once (a few hundred bytes): growing from 64
        // bytes took three or four copies each time.
        output.reserveCapacity(512)
        write(to: &output)
        return output
    }

    /// Appends the value's compact JSON text to `output`.
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .integer(let value): JSONValue.writeInteger(value, to: &output)
        case .number(let value): JSONValue.writeNumber(value, to: &output)
        case .string(let value): JSONValue.writeString(value, to: &output)
        case .array(let items):
            output.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { output.append(UInt8(ascii: ",")) }
                item.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            JSONValue.writeMembers(members, to: &output)
            output.append(UInt8(ascii: "}"))
        }
    }

    /// An object's members sorted by name (`String`'s `<`), as `name:value` pairs between commas.
    /// Small objects, the common case (a screen, an event, an answer), are sorted in place in
    /// temporary storage: no array of names on the heap and no second lookup of each value.
    static func writeMembers(_ members: [String: JSONValue], to output: inout [UInt8]) {
        func write(_ name: String, _ value: JSONValue, first: Bool) {
            if !first { output.append(UInt8(ascii: ",")) }
            JSONValue.writeString(name, to: &output)
            output.append(UInt8(ascii: ":"))
            value.write(to: &output)
        }
        let count = members.count
        guard count > 1 else {
            if let member = members.first { write(member.key, member.value, first: true) }
            return
        }
        guard count <= 16 else {
            for (position, member) in members.sorted(by: { $0.key < $1.key }).enumerated() {
                write(member.key, member.value, first: position == 0)
            }
            return
        }
        withUnsafeTemporaryAllocation(of: (key: String, value: JSONValue).self, capacity: count) { buffer in
            guard let base = buffer.baseAddress else { return }
            var filled = 0
            for member in members where filled < count {
                (base + filled).initialize(to: member)
                filled += 1
            }
            defer { base.deinitialize(count: filled) }
            // Insertion sort: names are unique, and at most 16.
            for index in 1..<filled {
                var position = index
                while position > 0, buffer[position].key < buffer[position - 1].key {
                    buffer.swapAt(position, position - 1)
                    position -= 1
                }
            }
            for index in 0..<filled { write(buffer[index].key, buffer[index].value, first: index == 0) }
        }
    }

    /// An integer in decimal, its sign included, digit by digit (no string on the way).
    static func writeInteger(_ value: Int64, to output: inout [UInt8]) {
        if value < 0 { output.append(UInt8(ascii: "-")) }
        let digits = digitCount(value) - (value < 0 ? 1 : 0)
        let start = output.count
        output.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        output.withUnsafeMutableBufferPointer { buffer in
            var rest = value.magnitude
            var position = start + digits
            while rest > 0 {
                position -= 1
                buffer[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
        }
    }

    /// Numbers that are whole and small print without a fraction; others in Swift's shortest
    /// round-tripping form, which is valid JSON. Non-finite numbers cannot occur in JSON and print
    /// as `null`.
    static func writeNumber(_ value: Double, to output: inout [UInt8]) {
        guard value.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        if value == value.rounded(), abs(value) < 1e15 {
            output.append(contentsOf: String(Int64(value)).utf8)
        } else {
            output.append(contentsOf: value.description.utf8)
        }
    }

    /// Writes a JSON string literal with the escapes RFC 8259 §7 requires.
    public static func writeString(_ value: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
