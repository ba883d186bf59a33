/// Numbers in signed tokens (hand-off codes, stream tickets) are carried most significant byte
/// first, whatever the machine's own order: a token made on one instance verifies on any other.
extension Array where Element == UInt8 {
    /// Appends the bytes of `value`, most significant first.
    mutating func appendBigEndian<Integer: FixedWidthInteger>(_ value: Integer) {
        Swift.withUnsafeBytes(of: value.bigEndian) { append(contentsOf: $0) }
    }
}

extension FixedWidthInteger {
    /// The number whose bytes, most significant first, are `bytes` (as ``Swift/Array/appendBigEndian(_:)``
    /// wrote them); bytes beyond the type's width shift the first ones out.
    init<Bytes: Sequence<UInt8>>(bigEndianBytes bytes: Bytes) {
        var value: Self = 0
        for byte in bytes { value = value << 8 | Self(byte) }
        self = value
    }
}
