/// Bytes from a cryptographically secure generator: tokens, ids, keys and nonces.
package enum SecureRandom {
    /// `count` random bytes.
    package static func bytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }

    /// Fills `buffer` with random bytes. Should the library's generator ever fail, the bytes
    /// come from the system's (the standard library's `SystemRandomNumberGenerator`) instead.
    package static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard !buffer.isEmpty, !Backend.fillRandom(buffer) else { return }
        var generator = SystemRandomNumberGenerator()
        for index in buffer.indices { buffer[index] = generator.next() }
    }
}
