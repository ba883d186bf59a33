import Foundation
import NavigationValuesStore
import NavigationValuesWire

/// Idempotency records as the store keeps them: the client's key only as a hash, and a create's
/// answer (which carries the new session's token) sealed under a key derived from the client's
/// own key. So the database never holds a usable token, nor anything that yields one without
/// the client's idempotency key (docs/Operations.md, Limits and retention: no usable token at rest).
///
/// There is no crypto library to call, so the seal is built from the store's SHA-256: HMAC-SHA256
/// (RFC 2104) derives an encryption key and a MAC key from the client's key and the scope, the
/// answer is XORed with a SHA-256 keystream in counter mode under a random nonce, and an
/// HMAC-SHA256 tag over the nonce and ciphertext is checked before anything is opened.
///
/// ```swift
/// let sealed = IdempotencySeal.seal(body, key: "k", scope: "POST /v1/sessions …", nonce: nonce)
/// IdempotencySeal.open(sealed, key: "k", scope: "POST /v1/sessions …")   // body
/// ```
enum IdempotencySeal {
    /// Marks a sealed body: `NVS1`, 16 bytes of nonce, the ciphertext, a 32-byte tag.
    static let magic = Array("NVS1".utf8)
    static let nonceLength = 16
    static let tagLength = 32

    /// The form of the client's key the store keeps and looks records up by.
    static func storedKey(_ key: String) -> String {
        "h1:" + SHA256.hexDigest(of: Array("navigation-values idempotency key\u{0}".utf8) + Array(key.utf8))
    }

    /// `plaintext` sealed under `key` and `scope`.
    static func seal(_ plaintext: [UInt8], key: String, scope: String, nonce: [UInt8]) -> [UInt8] {
        let keys = Keys(key: key, scope: scope)
        let ciphertext = xor(plaintext, keystream: keys.encryption, nonce: nonce)
        return magic + nonce + ciphertext + hmac(keys.authentication, nonce + ciphertext)
    }

    /// The plaintext of a sealed body, or nil when it is not sealed or not under this key.
    static func open(_ sealed: [UInt8], key: String, scope: String) -> [UInt8]? {
        guard isSealed(sealed), sealed.count >= magic.count + nonceLength + tagLength else { return nil }
        let keys = Keys(key: key, scope: scope)
        let nonce = Array(sealed[magic.count..<(magic.count + nonceLength)])
        let ciphertext = Array(sealed[(magic.count + nonceLength)..<(sealed.count - tagLength)])
        let tag = Array(sealed.suffix(tagLength))
        var difference: UInt8 = 0
        for (left, right) in zip(tag, hmac(keys.authentication, nonce + ciphertext)) { difference |= left ^ right }
        guard difference == 0 else { return nil }
        return xor(ciphertext, keystream: keys.encryption, nonce: nonce)
    }

    /// Whether `body` has a seal's form (records kept before sealing have none).
    static func isSealed(_ body: [UInt8]) -> Bool { body.starts(with: magic) }

    // MARK: - Pieces

    private struct Keys {
        var encryption: [UInt8]
        var authentication: [UInt8]

        init(key: String, scope: String) {
            let master = SHA256.digest(
                of: Array("navigation-values idempotency seal\u{0}\(scope)\u{0}".utf8) + Array(key.utf8))
            encryption = IdempotencySeal.hmac(master, Array("encrypt".utf8))
            authentication = IdempotencySeal.hmac(master, Array("authenticate".utf8))
        }
    }

    /// HMAC-SHA256 (RFC 2104) of `message` under a key of at most 64 bytes.
    static func hmac(_ key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? SHA256.digest(of: key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = SHA256.digest(of: block.map { $0 ^ 0x36 } + message)
        return SHA256.digest(of: block.map { $0 ^ 0x5c } + inner)
    }

    /// `bytes` XOR SHA-256(key ‖ nonce ‖ counter), counter from 0, 32 bytes per block.
    private static func xor(_ bytes: [UInt8], keystream key: [UInt8], nonce: [UInt8]) -> [UInt8] {
        var output = bytes
        var counter: UInt64 = 0
        var offset = 0
        let prefix = key + nonce
        while offset < output.count {
            let block = SHA256.digest(of: prefix + withUnsafeBytes(of: counter.bigEndian, Array.init))
            for index in 0..<min(block.count, output.count - offset) { output[offset + index] ^= block[index] }
            offset += block.count
            counter += 1
        }
        return output
    }
}

extension StoredAnswer {
    /// The record to keep for this answer under the client's `key`: the key hashed, and the
    /// body sealed when `isSecret` (a create's answer, which carries a token).
    func record(
        scope: String, key: String, session: SessionID?, at date: Date, isSecret: Bool, identifiers: IdentifierGenerator
    ) -> IdempotencyRecord {
        let stored =
            isSecret
            ? IdempotencySeal.seal(
                body, key: key, scope: scope, nonce: identifiers.randomBytes(IdempotencySeal.nonceLength))
            : body
        return IdempotencyRecord(
            scope: scope, key: IdempotencySeal.storedKey(key), status: status, headers: headers, body: Data(stored),
            createdAt: date, session: session)
    }

    /// The answer a kept record holds for the client's `key`; nil when it is sealed under
    /// another key (which a hash collision alone could cause).
    init?(opening record: IdempotencyRecord, key: String) {
        var body = [UInt8](record.body)
        if IdempotencySeal.isSealed(body) {
            guard let opened = IdempotencySeal.open(body, key: key, scope: record.scope) else { return nil }
            body = opened
        }
        self.init(status: record.status, headers: record.headers, body: body)
    }
}

extension SessionStore {
    /// The answer kept under the client's `key` in `scope`: looked up by the key's hash, then,
    /// for records kept before keys were hashed (which expire within 24 h), by the key itself.
    func idempotentAnswer(scope: String, key: String) async throws -> StoredAnswer? {
        if let record = try await idempotencyRecord(scope: scope, key: IdempotencySeal.storedKey(key)) {
            return StoredAnswer(opening: record, key: key)
        }
        guard let legacy = try await idempotencyRecord(scope: scope, key: key),
            !IdempotencySeal.isSealed([UInt8](legacy.body))
        else { return nil }
        return StoredAnswer(opening: legacy, key: key)
    }
}
