import Foundation
import NavigationValuesCrypto
import NavigationValuesStore
import NavigationValuesWire

/// Idempotency records as the store keeps them: the client's key only as a hash, and a create's
/// answer (which carries the new session's token) sealed under a key derived from the client's
/// own key. So the database never holds a usable token, nor anything that yields one without
/// the client's idempotency key (docs/Operations.md, Limits and retention: no usable token at rest).
///
/// A seal is AES-256-GCM (`NVS2`, a magic, a random 12-byte nonce, the ciphertext and its 16-byte
/// tag) under HMAC-SHA256 of a master key, itself the SHA-256 of the scope and the client's key;
/// the magic is authenticated with the ciphertext. Records sealed in the earlier form (`NVS1`, see
/// `LegacySeal`) still open, for as long as they are kept (24 hours).
///
/// ```swift
/// let sealed = try IdempotencySeal.seal(body, key: "k", scope: "POST /v1/sessions …", nonce: nonce)
/// IdempotencySeal.open(sealed, key: "k", scope: "POST /v1/sessions …")   // body
/// ```
enum IdempotencySeal {
    /// Marks a sealed body: `NVS2`, the nonce, the ciphertext, the tag.
    static let magic = Array("NVS2".utf8)
    static let nonceLength = AES256GCM.nonceByteCount

    /// The form of the client's key the store keeps and looks records up by.
    static func storedKey(_ key: String) -> String {
        "h1:" + SHA256.hexDigest(of: Array("navigation-values idempotency key\u{0}".utf8) + Array(key.utf8))
    }

    /// `plaintext` sealed under `key` and `scope`, with a fresh `nonce` (12 bytes, never reused).
    static func seal(_ plaintext: [UInt8], key: String, scope: String, nonce: [UInt8]) throws(CryptoError) -> [UInt8] {
        let sealed = try AES256GCM.seal(
            plaintext, key: encryptionKey(key: key, scope: scope), nonce: nonce, authenticating: magic)
        return magic + nonce + sealed
    }

    /// The plaintext of a sealed body, or nil when it is not sealed or not under this key.
    static func open(_ sealed: [UInt8], key: String, scope: String) -> [UInt8]? {
        if sealed.starts(with: LegacySeal.magic) { return LegacySeal.open(sealed, key: key, scope: scope) }
        guard sealed.starts(with: magic), sealed.count >= magic.count + nonceLength + AES256GCM.tagByteCount else {
            return nil
        }
        let nonce = Array(sealed[magic.count..<(magic.count + nonceLength)])
        return AES256GCM.open(
            sealed[(magic.count + nonceLength)...], key: encryptionKey(key: key, scope: scope), nonce: nonce,
            authenticating: magic)
    }

    /// Whether `body` has a seal's form, of either version (records kept before sealing have none).
    static func isSealed(_ body: [UInt8]) -> Bool { body.starts(with: magic) || body.starts(with: LegacySeal.magic) }

    /// The key of the scope and the client's key, from which each version derives its own.
    fileprivate static func masterKey(key: String, scope: String) -> [UInt8] {
        SHA256.digest(of: Array("navigation-values idempotency seal\u{0}\(scope)\u{0}".utf8) + Array(key.utf8))
    }

    private static func encryptionKey(key: String, scope: String) -> [UInt8] {
        HMAC.sha256(key: masterKey(key: key, scope: scope), message: Array("aes-256-gcm".utf8))
    }
}

/// Opens records sealed in the first form, `NVS1`: the same master key, HMAC-SHA256 of it for an
/// encryption key and a MAC key, the body XORed with SHA-256(encryption key ‖ nonce ‖ counter)
/// blocks (a 16-byte random nonce, a 64-bit big-endian counter from 0), then an HMAC-SHA256 tag
/// over the nonce and ciphertext. Nothing is sealed this way any more; records are kept 24 hours,
/// so this can go once no server of the earlier form has written to a database for a day.
enum LegacySeal {
    static let magic = Array("NVS1".utf8)
    static let nonceLength = 16
    static let tagLength = 32

    /// The plaintext, when the tag matches under `key` and `scope`.
    static func open(_ sealed: [UInt8], key: String, scope: String) -> [UInt8]? {
        guard sealed.starts(with: magic), sealed.count >= magic.count + nonceLength + tagLength else { return nil }
        let master = IdempotencySeal.masterKey(key: key, scope: scope)
        let encryption = HMAC.sha256(key: master, message: Array("encrypt".utf8))
        let authentication = HMAC.sha256(key: master, message: Array("authenticate".utf8))
        let nonce = Array(sealed[magic.count..<(magic.count + nonceLength)])
        let ciphertext = Array(sealed[(magic.count + nonceLength)..<(sealed.count - tagLength)])
        guard
            constantTimeEquals(sealed.suffix(tagLength), HMAC.sha256(key: authentication, message: nonce + ciphertext))
        else { return nil }
        var plaintext = ciphertext
        var counter: UInt64 = 0
        var offset = 0
        while offset < plaintext.count {
            let block = SHA256.digest(of: encryption + nonce + withUnsafeBytes(of: counter.bigEndian, Array.init))
            for index in 0..<min(block.count, plaintext.count - offset) { plaintext[offset + index] ^= block[index] }
            offset += block.count
            counter += 1
        }
        return plaintext
    }
}

extension StoredAnswer {
    /// The record to keep for this answer under the client's `key`: the key hashed, and the
    /// body sealed when `isSecret` (a create's answer, which carries a token).
    ///
    /// - Throws: `CryptoError` when sealing fails (libcrypto could not run AES-256-GCM).
    func record(
        scope: String, key: String, session: SessionID?, at date: Date, isSecret: Bool, identifiers: IdentifierGenerator
    ) throws(CryptoError) -> IdempotencyRecord {
        let stored =
            isSecret
            ? try IdempotencySeal.seal(
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
