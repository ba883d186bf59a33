/// Whether two byte strings are equal, in time that depends only on their lengths, never on
/// where they differ: for comparing secrets (tokens, MACs) with what a client sent.
package func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    return withContiguousBytes(lhs) { left in
        withContiguousBytes(rhs) { right in Backend.constantTimeEquals(left, right) }
    }
}

/// Whether two strings are equal (byte for byte, in UTF-8), in time that depends only on their lengths.
package func constantTimeEquals(_ lhs: String, _ rhs: String) -> Bool {
    var lhs = lhs
    var rhs = rhs
    // withUTF8 reads a native string's bytes in place (no copy for the strings compared here).
    return lhs.withUTF8 { left in rhs.withUTF8 { right in constantTimeEquals(left, right) } }
}
