import Foundation
import NavigationValuesWire

// The rows of hand-offs ("continue on my other device") and of the device tokens they give.

/// One row of `handoffs`: a code's record. The code itself is never stored.
public struct HandoffRecord: Sendable, Equatable {
    /// The code's random id (base64url).
    public var id: String
    public var session: SessionID
    /// Whether redeeming makes a fork at `version` (else a token onto the session itself).
    public var fork: Bool
    /// The session's version when the hand-off was made.
    public var version: Int64
    public var createdAt: Date
    public var expiresAt: Date
    /// When it was redeemed; nil while unused.
    public var usedAt: Date?

    public init(
        id: String, session: SessionID, fork: Bool, version: Int64, createdAt: Date, expiresAt: Date,
        usedAt: Date? = nil
    ) {
        self.id = id
        self.session = session
        self.fork = fork
        self.version = version
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.usedAt = usedAt
    }
}

/// A device token to keep when a hand-off onto its session is redeemed.
public struct DeviceTokenRecord: Sendable, Equatable {
    /// SHA-256 of the token, hex; the token itself is never stored.
    public var tokenHash: String
    public var session: SessionID
    /// The hand-off it was redeemed with.
    public var handoff: String
    public var createdAt: Date

    public init(tokenHash: String, session: SessionID, handoff: String, createdAt: Date) {
        self.tokenHash = tokenHash
        self.session = session
        self.handoff = handoff
        self.createdAt = createdAt
    }
}

/// What consuming a hand-off did (``SessionStore/consumeHandoff(_:at:device:maxDevices:)``).
public enum HandoffConsumption: Sendable, Equatable {
    /// This call used it (and kept the device token, when one was given).
    case consumed
    /// It was used before (by this or another instance), or there is no such hand-off.
    case notAvailable
    /// Its session already has `maxDevices` device tokens: nothing was kept, the code is unused.
    case tooManyDevices
}
