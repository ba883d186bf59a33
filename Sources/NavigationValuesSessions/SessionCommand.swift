import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// Configurable limits (docs/API.md, Limits).
public struct SessionLimits: Sendable, Equatable {
    public var maxScreens = 1_000
    public var maxValuesPerScreen = 1_000
    public var maxValueBytes = 64 * 1024
    public var maxNesting = 64
    public var maxNameLength = 256
    /// Entries a schema may declare, values and preferences together.
    public var maxSchemaEntries = 1_000
    /// Bytes of JSON of a schema's declared defaults, all entries together: every screen's
    /// `resolved` lists every declared value with its default, so this bounds what each screen adds.
    public var maxDefaultBytes = 64 * 1024
    /// Bytes of JSON of the whole session as `GET /v1/sessions/{id}` renders it; bounds every
    /// read, replay and snapshot of it. A mutation that would grow it past this is refused.
    public var maxSessionBytes = 4 * 1024 * 1024
    /// Bytes of JSON of one event, and of one mutation's answer (`affected`, `deliveries`,
    /// pushed screens). A mutation whose event or answer would be larger is refused.
    public var maxEventBytes = 4 * 1024 * 1024
    /// Stacks a session holds at once, the main one, tabs and presentations included (docs/Stacks.md).
    public var maxStacks = 32
    /// Presentations that may lead to a stack: a sheet presented from a tab is 1 deep, a cover it
    /// presents 2 (docs/Stacks.md).
    public var maxPresentationDepth = 8
    /// Operations in one batch (`POST …/batch`).
    public var maxBatchOperations = 100

    public init() {}
}

/// A read of one session. Reads never change a session and append no event.
package enum SessionQuery: Sendable {
    /// The whole session (`GET /v1/sessions/{id}`).
    case session
    /// One screen by reference: an id, `root` or `top` (`GET …/screens/{screen}`).
    case screen(String)
    /// The whole session, each screen with its explanation (`GET /v1/sessions/{id}?explain=1`).
    case explainedSession
    /// One screen with its explanation (`GET …/screens/{screen}?explain=1`).
    case explainedScreen(String)
    /// Every stack (`GET …/stacks`).
    case stacks
    /// One stack by reference: an id, `selected` or `top` (`GET …/stacks/{stack}`).
    case stack(String)

    /// What a read answers.
    package enum Result: Sendable {
        /// The whole session, as its JSON text (rendered once per version: see `RenderedSession`).
        case session(RenderedSession)
        case screen(ScreenResource, version: Int64)
        case stacks(StackList)
        case stack(StackResource, version: Int64)
    }
}

/// A change asked of one session, parsed from the request but not yet checked against the
/// session: `CommandValidator` turns it into a `SessionOperation`. A `stack` or `screen` is the
/// reference the request gave (docs/Stacks.md, Screen and stack references); docs/API.md's endpoints
/// address the main stack, `main`, as docs/Stacks.md's address any stack.
package enum SessionCommand: Sendable {
    case end(purge: Bool)
    /// `POST …/push`, `POST …/stacks/{stack}/push`: `{"name", "values"}`.
    case push(stack: String, body: JSONValue)
    /// `POST …/pop`, `POST …/stacks/{stack}/pop`: `{"count"}` or `{"to"}`.
    case pop(stack: String, body: JSONValue)
    /// `PUT …/path`, `PUT …/stacks/{stack}/path`: `{"screens": [...]}`.
    case replacePath(stack: String, body: JSONValue)
    case patchValues(screen: String, body: JSONValue)
    case setHandler(screen: String, key: String, body: JSONValue)
    case removeHandler(screen: String, key: String)
    case publish(screen: String, key: String, body: JSONValue)

    // MARK: Several stacks (docs/Stacks.md)

    /// `POST …/stacks`: `{"id", "root": {"name", "values"}}`.
    case createStack(JSONValue)
    /// `POST …/select`: `{"stack"}`.
    case selectStack(JSONValue)
    /// `DELETE …/stacks/{stack}`: removes a tab, dismisses a presentation.
    case removeStack(stack: String)
    /// `POST …/stacks/{stack}/move`: `{"position"}`.
    case moveStack(stack: String, body: JSONValue)
    /// `POST …/present`: `{"from", "style", "root"}`.
    case present(JSONValue)
    /// `POST …/dismiss`: `{"stack"}` (default: the presentation a user sees).
    case dismiss(JSONValue)
    /// `PUT …/screens/{screen}/above`: `{"screens": [...]}`.
    case replaceAbove(screen: String, body: JSONValue)
    /// `POST …/screens/{screen}/return`: `{"key", "value"}`.
    case returnResult(screen: String, body: JSONValue)
    /// `POST …/batch`: `{"operations": [...]}`, applied all-or-nothing as one event.
    case batch(JSONValue)

    var isPurge: Bool {
        if case .end(purge: true) = self { true } else { false }
    }
}

/// Who is calling.
package enum Credential: Sendable, Equatable {
    case admin
    /// A bearer token as sent; checked against the session's token hash when a session is named.
    case token(String)
    /// A read-only credential, already verified: an observer token or a stream ticket. It may
    /// read what its scope covers and never change anything.
    case reader(ReadGrant)
    /// A device token (`td_…`), already verified: it reads and changes the one session a
    /// hand-off gave it, as that session's own token does.
    case device(SessionID)
    case none

    /// A token that could have been issued (an admin token matched earlier and is `.admin`).
    package var isWellFormedToken: Bool {
        switch self {
        case .token(let token): IdentifierGenerator.isWellFormedToken(token)
        case .device: true
        case .admin, .reader, .none: false
        }
    }

    /// Whether it is a read-only credential.
    package var isReader: Bool {
        if case .reader = self { true } else { false }
    }

    /// Whether the credential may read every session (the admin token, or a read-only
    /// credential issued for every session).
    package var canReadEverySession: Bool {
        switch self {
        case .admin: true
        case .reader(let grant): grant.scope == .everySession
        case .token, .device, .none: false
        }
    }
}

/// What a read-only credential may read, and where it came from.
package struct ReadGrant: Sendable, Equatable {
    /// The sessions it covers.
    package enum Scope: Sendable, Equatable {
        case session(SessionID)
        case everySession
    }

    /// What kind of read-only credential it is.
    package enum Source: Sendable, Equatable {
        /// An observer token (`ro_…`), by id.
        case observer(ObserverID)
        /// A stream ticket (`st_…`), itself issued to the holder of a token (an observer's, when
        /// `observer` is set).
        case ticket(observer: ObserverID?)
    }

    package var scope: Scope
    package var source: Source
    /// When it stops working; nil for never (until revoked).
    package var expiresAt: Date?

    package init(scope: Scope, source: Source, expiresAt: Date? = nil) {
        self.scope = scope
        self.source = source
        self.expiresAt = expiresAt
    }

    /// Whether it covers session `id`.
    package func covers(_ id: SessionID) -> Bool {
        switch scope {
        case .everySession: true
        case .session(let session): session == id
        }
    }

    /// What it is, for error messages.
    var name: String {
        switch source {
        case .observer: "observer token"
        case .ticket: "stream ticket"
        }
    }
}

/// An `Idempotency-Key` and what to keep under it: a retry with the same key in the same scope
/// gets the first answer again and applies nothing twice (docs/API.md, General).
///
/// The answer's stored form is the caller's to choose (the API keeps the HTTP answer), so the
/// domain records it in the mutation's own transaction without knowing HTTP.
package struct Idempotency<Result>: Sendable {
    package var key: String
    /// `METHOD path` (and for creation a hash of the body): the scope the key is unique in.
    package var scope: String
    /// The form of an answer to keep for retries.
    package var record: @Sendable (Result) -> StoredAnswer

    package init(key: String, scope: String, record: @escaping @Sendable (Result) -> StoredAnswer) {
        self.key = key
        self.scope = scope
        self.record = record
    }
}

/// An answer as kept for idempotent retries: status, the headers worth replaying and the body.
package struct StoredAnswer: Sendable, Equatable {
    package var status: Int
    package var headers: [String: String]
    package var body: [UInt8]

    package init(status: Int, headers: [String: String], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Everything a command carries besides its body.
package struct CommandContext: Sendable {
    package var credential: Credential
    /// `If-Match`: the version the session must be at; nil to apply whatever the version.
    package var ifMatch: Int64?
    package var idempotency: Idempotency<MutationResult>?
    /// How the caller answers an applied result (the API's status, headers and JSON body). When
    /// set, the session renders the answer once, checks its size against the limits on those
    /// bytes, keeps them under the idempotency key and hands them back in the outcome, instead
    /// of the answer being built for each of the three.
    package var answer: (@Sendable (MutationResult) -> StoredAnswer)?

    package init(
        credential: Credential, ifMatch: Int64? = nil, idempotency: Idempotency<MutationResult>? = nil,
        answer: (@Sendable (MutationResult) -> StoredAnswer)? = nil
    ) {
        self.credential = credential
        self.ifMatch = ifMatch
        self.idempotency = idempotency
        self.answer = answer
    }
}

/// What a command answers: its result, or the first answer again for a retried idempotency key.
package enum CommandOutcome: Sendable {
    /// The result, and its answer when the context said how to render one.
    case applied(MutationResult, answer: StoredAnswer? = nil)
    case replayed(StoredAnswer)
}

/// A session's JSON (`SessionResource`) at one version, serialized once: a session actor keeps
/// the last one it rendered and answers every read at that version with the same bytes, until
/// a mutation moves the version on.
package struct RenderedSession: Sendable {
    /// The version the text shows.
    package var version: Int64
    /// `SessionResource.json`, serialized (UTF-8).
    package var json: [UInt8]

    package init(_ resource: SessionResource) {
        version = resource.version
        json = Array(resource.json.serialized().utf8)
    }
}
