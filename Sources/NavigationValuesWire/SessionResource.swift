import Foundation
import NavigationValues

/// A session as the API shows it (docs/API.md, Resources): its header and its main stack's screens,
/// root first; with several stacks (docs/Stacks.md), also the others, which one is selected and the
/// screen a user sees.
///
/// ```swift
/// let session = try SessionResource(json: answer)
/// session.screens.last?.resolved["title"]
/// ```
public struct SessionResource: Sendable, Equatable {
    public var id: SessionID
    /// The seq of the session's latest event.
    public var version: Int64
    public var state: SessionState
    public var createdAt: Date
    public var updatedAt: Date
    /// The session's schema as docs/API.md writes it (`values`, `preferences`, `strict`).
    public var schema: JSONValue
    /// The main stack's screens, root first.
    public var screens: [ScreenResource]
    /// The selected stack: `main` or a tab.
    public var selectedStack: StackID
    /// The screen a user sees: the topmost screen of the selected stack or of what it presents.
    public var visibleScreen: ScreenID?
    /// Every stack but the main one: the tabs in order, then the presentations in the order they
    /// were presented (a presenter's stack always comes before the stack it presents).
    public var stacks: [StackResource]
    /// For a fork, the session and revision it started from; nil otherwise (the `origin` member
    /// is then absent).
    public var origin: SessionOrigin?

    public init(
        id: SessionID, version: Int64, state: SessionState, createdAt: Date, updatedAt: Date, schema: JSONValue,
        screens: [ScreenResource], selectedStack: StackID = .main, visibleScreen: ScreenID? = nil,
        stacks: [StackResource] = [], origin: SessionOrigin? = nil
    ) {
        self.id = id
        self.version = version
        self.state = state
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.schema = schema
        self.screens = screens
        self.selectedStack = selectedStack
        self.visibleScreen = visibleScreen ?? screens.last?.id
        self.stacks = stacks
        self.origin = origin
    }

    /// The session as JSON.
    public var json: JSONValue {
        var members: [String: JSONValue] = [
            "id": .string(id.rawValue),
            "version": .integer(version),
            "state": .string(state.rawValue),
            "createdAt": .string(Timestamp.string(from: createdAt)),
            "updatedAt": .string(Timestamp.string(from: updatedAt)),
            "schema": schema,
            "screens": .array(screens.map(\.json)),
            "selectedStack": .string(selectedStack.rawValue),
            "visibleScreen": visibleScreen.map { .string($0.rawValue) } ?? .null,
            "stacks": .array(stacks.map(\.json)),
        ]
        if let origin { members["origin"] = origin.json }
        return .object(members)
    }

    /// Decodes what `json` writes (members it does not know, such as a create answer's `token`,
    /// are ignored; `selectedStack`, `visibleScreen` and `stacks`, which JSON written before
    /// several stacks lacks, default to one main stack).
    ///
    /// - Throws: `WireDecodingError` naming the first member that is missing or mistyped.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        let stateName = try fields.string("state")
        guard let state = SessionState(rawValue: stateName) else {
            throw WireDecodingError(pointer: "/state", reason: "expected active or ended")
        }
        self.init(
            id: SessionID(try fields.string("id")), version: try fields.integer("version"), state: state,
            createdAt: try fields.date("createdAt"), updatedAt: try fields.date("updatedAt"),
            schema: try fields.value("schema"),
            screens: try fields.list("screens") { item, pointer throws(WireDecodingError) in
                try ScreenResource(json: item, pointer: pointer)
            },
            selectedStack: fields.members["selectedStack"] == nil ? .main : try fields.stackID("selectedStack"),
            visibleScreen: fields.members["visibleScreen"] == nil ? nil : try fields.optionalScreenID("visibleScreen"),
            stacks: fields.members["stacks"] == nil
                ? []
                : try fields.list("stacks") { item, pointer throws(WireDecodingError) in
                    try StackResource(json: item, pointer: pointer)
                },
            origin: try fields.members["origin"].map { json throws(WireDecodingError) in
                try SessionOrigin(json: json, pointer: "/origin")
            })
    }
}

/// Where a forked session came from: the session it was forked from and the revision it started
/// as (`"origin": {"session": "s_…", "version": 12}`).
public struct SessionOrigin: Sendable, Equatable {
    public var session: SessionID
    /// The origin's version the fork started as; the fork's own history up to it is a copy of the
    /// origin's.
    public var version: Int64

    public init(session: SessionID, version: Int64) {
        self.session = session
        self.version = version
    }

    /// `{"session", "version"}`.
    public var json: JSONValue { ["session": .string(session.rawValue), "version": .integer(version)] }

    /// Decodes what `json` writes.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        self.init(session: SessionID(try fields.string("session")), version: try fields.integer("version"))
    }
}

/// A line of the admin list of sessions (`GET /v1/sessions`).
public struct SessionSummary: Sendable, Equatable {
    public var id: SessionID
    public var version: Int64
    public var state: SessionState
    /// Screens on the stack, root included.
    public var depth: Int
    public var updatedAt: Date

    public init(id: SessionID, version: Int64, state: SessionState, depth: Int, updatedAt: Date) {
        self.id = id
        self.version = version
        self.state = state
        self.depth = depth
        self.updatedAt = updatedAt
    }

    /// `{"id", "version", "state", "depth", "updatedAt"}`.
    public var json: JSONValue {
        [
            "id": .string(id.rawValue), "version": .integer(version), "state": .string(state.rawValue),
            "depth": .integer(Int64(depth)), "updatedAt": .string(Timestamp.string(from: updatedAt)),
        ]
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        guard let state = SessionState(rawValue: try fields.string("state")) else {
            throw WireDecodingError(pointer: fields.at("state"), reason: "expected active or ended")
        }
        self.init(
            id: SessionID(try fields.string("id")), version: try fields.integer("version"), state: state,
            depth: Int(clamping: try fields.integer("depth")), updatedAt: try fields.date("updatedAt"))
    }
}

/// What `POST /v1/sessions` answers: the new session, and its token (the only time the token is
/// shown: keep it).
public struct CreatedSession: Sendable, Equatable {
    public var session: SessionResource
    /// The session's bearer token (`t_…`).
    public var token: String

    public init(session: SessionResource, token: String) {
        self.session = session
        self.token = token
    }

    /// The session resource with a `"token"` member.
    public var json: JSONValue {
        guard case .object(var members) = session.json else { return session.json }
        members["token"] = .string(token)
        return .object(members)
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        self.init(session: try SessionResource(json: json), token: try fields.string("token"))
    }
}

/// A page of the admin list of sessions: `{"sessions": [...], "nextCursor": id or null}`.
public struct SessionList: Sendable, Equatable {
    public var sessions: [SessionSummary]
    /// The `cursor` for the next page; nil on the last one.
    public var nextCursor: SessionID?

    public init(sessions: [SessionSummary], nextCursor: SessionID?) {
        self.sessions = sessions
        self.nextCursor = nextCursor
    }

    public var json: JSONValue {
        ["sessions": .array(sessions.map(\.json)), "nextCursor": nextCursor.map { .string($0.rawValue) } ?? .null]
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        var cursor: SessionID?
        if try fields.value("nextCursor") != .null { cursor = SessionID(try fields.string("nextCursor")) }
        self.init(
            sessions: try fields.list("sessions") { item, pointer throws(WireDecodingError) in
                try SessionSummary(json: item, pointer: pointer)
            },
            nextCursor: cursor)
    }
}
