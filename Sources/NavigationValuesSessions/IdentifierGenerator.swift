import NavigationValues
import NavigationValuesCrypto
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// Makes ids and tokens. The live generator reads the cryptographic random generator; tests may pass their own.
public struct IdentifierGenerator: Sendable {
    public var randomBytes: @Sendable (Int) -> [UInt8]

    public init(randomBytes: @escaping @Sendable (Int) -> [UInt8]) {
        self.randomBytes = randomBytes
    }

    /// Ids and tokens from the cryptographic random generator, drawn 4 KiB at a time (one call
    /// per 4 KiB instead of one per id: a push's screen id, a request id and a token each need
    /// one).
    public static let live: IdentifierGenerator = {
        let pool = RandomPool()
        return IdentifierGenerator { count in pool.take(count) }
    }()

    /// Ids carry 72 random bits in 14 characters, which Swift keeps inline (no heap string per
    /// id). They only need to be unique (the store refuses a duplicate); tokens are what must be
    /// unguessable, and carry 256 bits.
    package func sessionID() -> SessionID { SessionID(Base64URL.encode(randomBytes(9), prefix: "s_")) }
    package func screenID() -> ScreenID { ScreenID(Base64URL.encode(randomBytes(9), prefix: "c_")) }
    package func token() -> String { Base64URL.encode(randomBytes(32), prefix: "t_") }

    /// Whether `token` has the shape `token()` gives: `t_` and 43 base64url characters.
    package static func isWellFormedToken(_ token: String) -> Bool {
        let bytes = token.utf8
        guard bytes.count == 45, token.hasPrefix("t_") else { return false }
        return bytes.dropFirst(2).allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F
        }
    }
}

/// Bytes from the cryptographic random generator (`SecureRandom`: libcrypto's, or the system's on
/// Apple platforms), drawn a page at a time and handed out in order, each byte once.
/// Bytes waiting in the pool are as secret as the tokens made from them: they stay in this
/// process's memory, as a user-space generator's state would.
final class RandomPool: Sendable {
    private struct State {
        var bytes: [UInt8]
        var position: Int
    }

    private static let capacity = 4096
    private let state = Mutex(State(bytes: [], position: 0))

    /// `count` fresh random bytes.
    func take(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        guard count <= Self.capacity / 4 else { return Self.draw(count) }
        return state.withLock { state in
            if state.bytes.count - state.position < count {
                state.bytes = Self.draw(Self.capacity)
                state.position = 0
            }
            defer { state.position += count }
            return Array(state.bytes[state.position..<(state.position + count)])
        }
    }

    /// `count` bytes straight from the generator.
    private static func draw(_ count: Int) -> [UInt8] { SecureRandom.bytes(count) }
}

package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Base64 with the URL-safe alphabet and no padding (RFC 4648 §5), after `prefix`. Written
    /// straight into the string's storage: one allocation at most (none for 15 bytes or fewer).
    package static func encode(_ bytes: [UInt8], prefix: String = "") -> String {
        let length = prefix.utf8.count + (bytes.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: length) { output in
            var at = 0
            for byte in prefix.utf8 {
                output[at] = byte
                at += 1
            }
            var index = 0
            while index < bytes.count {
                let first = bytes[index]
                let second = index + 1 < bytes.count ? bytes[index + 1] : 0
                let third = index + 2 < bytes.count ? bytes[index + 2] : 0
                output[at] = alphabet[Int(first >> 2)]
                output[at + 1] = alphabet[Int((first & 0x03) << 4 | second >> 4)]
                at += 2
                if index + 1 < bytes.count {
                    output[at] = alphabet[Int((second & 0x0F) << 2 | third >> 6)]
                    at += 1
                }
                if index + 2 < bytes.count {
                    output[at] = alphabet[Int(third & 0x3F)]
                    at += 1
                }
                index += 3
            }
            return at
        }
    }
}

/// Session tokens are stored as their SHA-256, never in clear.
enum TokenHasher {
    static func hash(_ token: String) -> String { SHA256.hexDigest(of: Array(token.utf8)) }
}

/// A token's SHA-256 in four words, for what stays in memory per session (the hex text
/// `TokenHasher.hash` gives takes 64 characters on the heap).
struct TokenDigest: Sendable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// The digest of `token`.
    init(of token: String) {
        words = Self.words(SHA256.digest(of: Array(token.utf8)))
    }

    /// The digest that 64 hex digits spell (`TokenHasher.hash`); nil for any other text.
    init?(hex: String) {
        guard let bytes = Hex.bytes(hex), bytes.count == SHA256.byteCount else { return nil }
        words = Self.words(bytes)
    }

    /// Whether the two are the same digest, compared without an early exit (constant time).
    func matches(_ other: TokenDigest) -> Bool {
        ((words.0 ^ other.words.0) | (words.1 ^ other.words.1) | (words.2 ^ other.words.2)
            | (words.3 ^ other.words.3)) == 0
    }

    /// The digest as 64 lowercase hex digits, as `TokenHasher.hash` writes it.
    var hex: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(SHA256.byteCount)
        for word in [words.0, words.1, words.2, words.3] { bytes.appendBigEndian(word) }
        return Hex.lowercase(bytes)
    }

    /// A 32-byte digest as four numbers, each of eight bytes read most significant first.
    private static func words(_ digest: [UInt8]) -> (UInt64, UInt64, UInt64, UInt64) {
        func word(_ start: Int) -> UInt64 { UInt64(bigEndianBytes: digest.dropFirst(start).prefix(8)) }
        return (word(0), word(8), word(16), word(24))
    }
}

extension IdentifierGenerator {
    /// An observer token's id: `o_` and 72 random bits, like session ids (unique, not secret).
    package func observerID() -> ObserverID { ObserverID(Base64URL.encode(randomBytes(9), prefix: "o_")) }
    /// A read-only observer token: `ro_` and 256 random bits.
    package func observerToken() -> String { "ro_" + Base64URL.encode(randomBytes(32)) }

    /// Whether `token` has the shape `observerToken()` gives: `ro_` and 43 base64url characters.
    package static func isWellFormedObserverToken(_ token: String) -> Bool {
        token.utf8.count == 46 && token.hasPrefix("ro_") && Base64URL.isEncoded(token.utf8.dropFirst(3))
    }
}

extension Base64URL {
    /// Whether every byte is of the URL-safe alphabet.
    package static func isEncoded(_ text: some Collection<UInt8>) -> Bool {
        text.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F
        }
    }

    /// The bytes of unpadded base64url text (RFC 4648 §5); nil when it is not such text.
    package static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case 0x41...0x5A: value = byte - 0x41
            case 0x61...0x7A: value = byte - 0x61 + 26
            case 0x30...0x39: value = byte - 0x30 + 52
            case 0x2D: value = 62
            case 0x5F: value = 63
            default: return nil
            }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero padding of the last character, and never a whole sextet.
        guard bits < 6, buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }
}
