import Foundation
import NavigationValues

/// An observer token's opaque id (`o_…`), which names it for listing and revoking; the token
/// itself is a secret shown once.
public struct ObserverID: Hashable, Comparable, Sendable, Codable, RawRepresentable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A read-only token for an observer (a support tool that watches but never writes), as
/// `GET /v1/observers/{id}` shows it: never the token itself.
///
/// ```swift
/// let observer = try ObserverResource(json: answer)
/// observer.session    // nil: it reads every session
/// ```
public struct ObserverResource: Sendable, Equatable {
    public var id: ObserverID
    /// The one session it may read; nil for every session (issued with the admin token).
    public var session: SessionID?
    /// What the issuer called it, to recognise it in a list.
    public var label: String
    public var createdAt: Date
    /// When it stops working; nil for never (until revoked).
    public var expiresAt: Date?

    public init(id: ObserverID, session: SessionID?, label: String, createdAt: Date, expiresAt: Date?) {
        self.id = id
        self.session = session
        self.label = label
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// `{"id", "session", "label", "createdAt", "expiresAt"}`.
    public var json: JSONValue {
        [
            "id": .string(id.rawValue), "session": session.map { .string($0.rawValue) } ?? .null,
            "label": .string(label), "createdAt": .string(Timestamp.string(from: createdAt)),
            "expiresAt": expiresAt.map { .string(Timestamp.string(from: $0)) } ?? .null,
        ]
    }

    /// Decodes what `json` writes (a created observer's `token` is ignored).
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        var session: SessionID?
        if try fields.value("session") != .null { session = SessionID(try fields.string("session")) }
        var expiresAt: Date?
        if try fields.value("expiresAt") != .null { expiresAt = try fields.date("expiresAt") }
        self.init(
            id: ObserverID(try fields.string("id")), session: session, label: try fields.string("label"),
            createdAt: try fields.date("createdAt"), expiresAt: expiresAt)
    }
}

/// What `POST /v1/observers` answers: the observer and its token (the only time it is shown).
public struct CreatedObserver: Sendable, Equatable {
    public var observer: ObserverResource
    /// The read-only bearer token (`ro_…`).
    public var token: String

    public init(observer: ObserverResource, token: String) {
        self.observer = observer
        self.token = token
    }

    /// The observer with a `"token"` member.
    public var json: JSONValue {
        guard case .object(var members) = observer.json else { return observer.json }
        members["token"] = .string(token)
        return .object(members)
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        self.init(observer: try ObserverResource(json: json), token: try fields.string("token"))
    }
}

/// A page of observers: `{"observers": [...], "nextCursor": id or null}`.
public struct ObserverList: Sendable, Equatable {
    public var observers: [ObserverResource]
    /// The `cursor` for the next page; nil on the last one.
    public var nextCursor: ObserverID?

    public init(observers: [ObserverResource], nextCursor: ObserverID?) {
        self.observers = observers
        self.nextCursor = nextCursor
    }

    public var json: JSONValue {
        ["observers": .array(observers.map(\.json)), "nextCursor": nextCursor.map { .string($0.rawValue) } ?? .null]
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        var cursor: ObserverID?
        if try fields.value("nextCursor") != .null { cursor = ObserverID(try fields.string("nextCursor")) }
        self.init(
            observers: try fields.list("observers") { item, pointer throws(WireDecodingError) in
                try ObserverResource(json: item, pointer: pointer)
            },
            nextCursor: cursor)
    }
}

/// What `POST /v1/tickets` answers: a short-lived, read-only credential for an `EventSource`
/// URL (`?ticket=…`), which cannot send an `Authorization` header.
public struct StreamTicket: Sendable, Equatable {
    /// The ticket (`st_…`), to pass as the `ticket` query parameter.
    public var ticket: String
    /// The session whose event stream it opens; nil for the stream of every session.
    public var session: SessionID?
    /// After this instant a stream can no longer be opened with it (a stream already open stays).
    public var expiresAt: Date

    public init(ticket: String, session: SessionID?, expiresAt: Date) {
        self.ticket = ticket
        self.session = session
        self.expiresAt = expiresAt
    }

    /// `{"ticket", "session", "expiresAt"}`.
    public var json: JSONValue {
        [
            "ticket": .string(ticket), "session": session.map { .string($0.rawValue) } ?? .null,
            "expiresAt": .string(Timestamp.string(from: expiresAt)),
        ]
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        var session: SessionID?
        if try fields.value("session") != .null { session = SessionID(try fields.string("session")) }
        self.init(ticket: try fields.string("ticket"), session: session, expiresAt: try fields.date("expiresAt"))
    }
}
