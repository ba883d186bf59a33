import Foundation
import NavigationValues

/// What `POST /v1/sessions/{id}/handoff` answers: a single-use code another device redeems
/// (`POST /v1/handoffs/redeem`) to continue the session, or a fork of it.
///
/// `{"code", "session", "fork", "version", "expiresAt"}`
public struct CreatedHandoff: Sendable, Equatable {
    /// The code (`h_…`, 38 URL-safe characters): short enough to type, scan or put in a link.
    public var code: String
    /// The session it continues (or forks).
    public var session: SessionID
    /// Whether redeeming makes a fork at `version` rather than joining the session itself.
    public var fork: Bool
    /// The session's version when the hand-off was made: where a fork starts.
    public var version: Int64
    /// After this instant the code can no longer be redeemed.
    public var expiresAt: Date

    public init(code: String, session: SessionID, fork: Bool, version: Int64, expiresAt: Date) {
        self.code = code
        self.session = session
        self.fork = fork
        self.version = version
        self.expiresAt = expiresAt
    }

    public var json: JSONValue {
        [
            "code": .string(code), "session": .string(session.rawValue), "fork": .bool(fork),
            "version": .integer(version), "expiresAt": .string(Timestamp.string(from: expiresAt)),
        ]
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        self.init(
            code: try fields.string("code"), session: SessionID(try fields.string("session")),
            fork: try fields.bool("fork"), version: try fields.integer("version"),
            expiresAt: try fields.date("expiresAt"))
    }
}
