import Foundation
import NavigationValues
import NavigationValuesCrypto
import NavigationValuesStore
import NavigationValuesWire

/// Issues and checks stream tickets: short-lived, read-only credentials for `EventSource` URLs
/// (`?ticket=st_…`), which cannot carry an `Authorization` header.
///
/// A ticket is not stored: it carries its scope (one session or every session), the observer
/// token it was issued to (if any) and its expiry, signed with HMAC-SHA256 (RFC 2104) under a key
/// derived from a server secret (the admin token), so that every server sharing that token
/// accepts the tickets of the others and none can be forged without it.
///
/// ```swift
/// let signer = StreamTicketSigner(secret: adminToken)
/// let ticket = signer.ticket(for: .session(id), observer: nil, expiresAt: now + 60)
/// let grant = try signer.verify(ticket, now: now)      // .reader(ReadGrant(scope: .session(id), …))
/// ```
package struct StreamTicketSigner: Sendable {
    private let key: [UInt8]

    /// What a valid ticket grants.
    package struct Contents: Sendable, Equatable {
        package var scope: ReadGrant.Scope
        package var observer: ObserverID?
        package var expiresAt: Date

        package init(scope: ReadGrant.Scope, observer: ObserverID?, expiresAt: Date) {
            self.scope = scope
            self.observer = observer
            self.expiresAt = expiresAt
        }
    }

    /// A signer whose key is derived from `secret`.
    package init(secret: String) {
        key = HMAC.sha256(key: Array(secret.utf8), message: Array("navigation-values stream tickets v1".utf8))
    }

    private static let prefix = "st_"
    private static let version: UInt8 = 1

    /// A ticket for `scope` (issued to `observer`, if any) that expires at `expiresAt`.
    package func ticket(for scope: ReadGrant.Scope, observer: ObserverID?, expiresAt: Date) -> String {
        var payload: [UInt8] = [Self.version]
        let milliseconds = UInt64(bitPattern: Int64((expiresAt.timeIntervalSince1970 * 1000).rounded(.down)))
        payload.appendBigEndian(milliseconds)
        let observerBytes = Array((observer?.rawValue ?? "").utf8.prefix(255))
        payload.append(UInt8(observerBytes.count))
        payload += observerBytes
        switch scope {
        case .everySession:
            payload.append(0)
        case .session(let id):
            payload.append(1)
            payload += Array(id.rawValue.utf8)
        }
        return Self.prefix + Base64URL.encode(payload + HMAC.sha256(key: key, message: payload))
    }

    /// Whether `text` is shaped like a ticket (it may still be forged, expired or damaged).
    package static func looksLikeTicket(_ text: String) -> Bool { text.hasPrefix(prefix) }

    /// What a ticket grants, when it is genuine and unexpired at `now`.
    ///
    /// - Throws: `SessionError(.unauthorized)` for a ticket that is damaged, forged or expired;
    ///   its detail never repeats the ticket.
    package func verify(_ ticket: String, now: Date) throws(SessionError) -> Contents {
        let invalid = SessionError(.unauthorized, "invalid stream ticket: get one with POST /v1/tickets")
        guard ticket.hasPrefix(Self.prefix), ticket.utf8.count <= 512,
            let bytes = Base64URL.decode(ticket.dropFirst(Self.prefix.count)), bytes.count >= 32 + 11
        else { throw invalid }
        let payload = Array(bytes.dropLast(32))
        let mac = Array(bytes.suffix(32))
        guard constantTimeEquals(mac, HMAC.sha256(key: key, message: payload)), payload[0] == Self.version else {
            throw invalid
        }
        let milliseconds = UInt64(bigEndianBytes: payload[1...8])
        let expiresAt = Date(timeIntervalSince1970: Double(Int64(bitPattern: milliseconds)) / 1000)
        let observerCount = Int(payload[9])
        guard payload.count >= 11 + observerCount else { throw invalid }
        let observerBytes = payload[10..<(10 + observerCount)]
        let observer = observerBytes.isEmpty ? nil : ObserverID(String(decoding: observerBytes, as: UTF8.self))
        let scope: ReadGrant.Scope
        switch payload[10 + observerCount] {
        case 0: scope = .everySession
        case 1: scope = .session(SessionID(String(decoding: payload[(11 + observerCount)...], as: UTF8.self)))
        default: throw invalid
        }
        guard now < expiresAt else {
            throw SessionError(
                .unauthorized,
                "the stream ticket expired at \(Timestamp.string(from: expiresAt)): get a new one with POST /v1/tickets"
            )
        }
        return Contents(scope: scope, observer: observer, expiresAt: expiresAt)
    }
}
