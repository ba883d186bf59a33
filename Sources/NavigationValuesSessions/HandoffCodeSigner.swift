import Foundation
import NavigationValuesCrypto

/// Makes and checks hand-off codes: what a device types, scans or opens to continue a session.
///
/// A code is `h_` and 36 base64url characters (27 bytes): a format byte, the id of the hand-off's
/// record (80 random bits), its expiry (seconds since 1970) and the first 96 bits of an
/// HMAC-SHA256 (RFC 2104) of those under a key derived from the server's secret (the one stream
/// tickets are signed with, under another label), so every server sharing the secret accepts
/// the others' codes and a changed character is caught before any database work. The code names
/// no session and carries no token: the record says which session, and whether it was used.
///
/// ```swift
/// let signer = HandoffCodeSigner(secret: adminToken)
/// let code = signer.code(id: bytes, expiresAt: now + 300)
/// let contents = try signer.verify(code)     // id and expiry, or .handoffInvalid
/// ```
package struct HandoffCodeSigner: Sendable {
    private let key: [UInt8]

    /// What a genuine code holds.
    package struct Contents: Sendable, Equatable {
        /// The record's id, base64url.
        package var id: String
        package var expiresAt: Date
    }

    /// A signer whose key is derived from `secret`.
    package init(secret: String) {
        key = HMAC.sha256(key: Array(secret.utf8), message: Array("navigation-values hand-off codes v1".utf8))
    }

    private static let prefix = "h_"
    private static let format: UInt8 = 1
    /// Random bytes of a record's id.
    package static let idBytes = 10
    private static let macBytes = 12
    private static let payloadBytes = 1 + idBytes + 4
    /// Characters of every code: the prefix and the base64url of 27 bytes.
    package static let length = 2 + 36

    /// The code of the record `id` (``idBytes`` random bytes) that expires at `expiresAt`
    /// (whole seconds: the fraction is dropped).
    package func code(id: [UInt8], expiresAt: Date) -> String {
        var payload: [UInt8] = [Self.format] + id.prefix(Self.idBytes)
        let seconds = UInt32(clamping: Int64(expiresAt.timeIntervalSince1970.rounded(.down)))
        payload.appendBigEndian(seconds)
        return Self.prefix + Base64URL.encode(payload + mac(payload))
    }

    /// The expiry a code for `expiresAt` carries.
    package static func carriedExpiry(_ expiresAt: Date) -> Date {
        Date(timeIntervalSince1970: expiresAt.timeIntervalSince1970.rounded(.down))
    }

    /// The record id and expiry of a genuine code (expired or not: the caller decides).
    ///
    /// - Throws: `SessionError(.handoffInvalid)` for text that is not a code this server (or one
    ///   sharing its secret) made; its detail never repeats the code.
    package func verify(_ code: String) throws(SessionError) -> Contents {
        let invalid = SessionError(
            .handoffInvalid, "this is not a hand-off code this server made (a character may be mistyped)")
        guard code.utf8.count == Self.length, code.hasPrefix(Self.prefix),
            let bytes = Base64URL.decode(code.dropFirst(Self.prefix.count)),
            bytes.count == Self.payloadBytes + Self.macBytes
        else { throw invalid }
        let payload = Array(bytes.prefix(Self.payloadBytes))
        guard constantTimeEquals(bytes.suffix(Self.macBytes), mac(payload)), payload[0] == Self.format else {
            throw invalid
        }
        let seconds = UInt32(bigEndianBytes: payload[(1 + Self.idBytes)...])
        return Contents(
            id: Base64URL.encode(Array(payload[1...Self.idBytes])),
            expiresAt: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }

    private func mac(_ payload: [UInt8]) -> [UInt8] {
        Array(HMAC.sha256(key: key, message: payload).prefix(Self.macBytes))
    }
}

extension IdentifierGenerator {
    /// A device token, given to a device that redeems a hand-off onto a session: `td_` and 256
    /// random bits. It reads and changes that session as the session's own token does.
    package func deviceToken() -> String { "td_" + Base64URL.encode(randomBytes(32)) }

    /// Whether `token` has the shape `deviceToken()` gives: `td_` and 43 base64url characters.
    package static func isWellFormedDeviceToken(_ token: String) -> Bool {
        token.utf8.count == 46 && token.hasPrefix("td_") && Base64URL.isEncoded(token.utf8.dropFirst(3))
    }
}
