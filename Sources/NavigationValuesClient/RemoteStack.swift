import Foundation
import NavigationValues
import NavigationValuesWire
import Observation

/// A live, observable copy of a remote session's main stack: the main stack of a `RemoteTree`
/// (the mirror of the whole session), for an app that uses one stack. An app reads forward values
/// and received preferences locally, and observes them with Observation (SwiftUI), as it would with
/// the seed on one device, while every change goes to the server.
///
/// ```swift
/// let stack = try await RemoteStack.connect(to: session)
/// stack.top?.resolved(Title.self)                     // read locally, observed
/// let result = try await stack.top?.remote.set(Title.self, "Inbox")
/// try await stack.sync(to: result?.version ?? 0)      // the mirror has seen the change
/// NavigationStack(path: $stack.path) { … }            // SwiftUI: setting the path sends the change
/// ```
///
/// It starts from a snapshot of the session and follows its event stream, which reconnects and
/// resumes by itself; an event it cannot apply (or of a type it does not know) makes it start
/// again from a new snapshot. After the last event it equals `GET /v1/sessions/{id}` exactly
/// (`resource`, which shows the whole session, its other stacks included: `tree` mirrors them).
/// It lives on the main actor, as SwiftUI state does.
@MainActor
@Observable
public final class RemoteStack {
    /// Where the mirror is.
    public typealias Status = RemoteTree.Status
    /// One screen of the mirror.
    public typealias Screen = RemoteTree.Screen

    /// The mirror of the whole session this stack is the main stack of.
    @ObservationIgnored public let tree: RemoteTree

    /// A mirror of `session` that does not follow it yet: call `start()`, or use `connect(to:)`.
    public init(session: RemoteSession) {
        tree = RemoteTree(session: session)
    }

    /// The main stack of `tree`, which keeps following (or not) as it does.
    public init(tree: RemoteTree) {
        self.tree = tree
    }

    /// A mirror of `session`, returned once its first snapshot is applied.
    ///
    /// - Throws: `RemoteError` when the session cannot be read (not found, token refused).
    public static func connect(to session: RemoteSession) async throws -> RemoteStack {
        RemoteStack(tree: try await RemoteTree.connect(to: session))
    }

    /// The session mirrored; send changes through it (or through a screen's `remote`).
    public var session: RemoteSession { tree.session }
    /// The screens, root first.
    public var screens: [Screen] { tree.main.screens }
    /// The version of the last event applied.
    public var version: Int64 { tree.version }
    /// Whether the session is active or ended.
    public var state: SessionState { tree.state }
    /// Where the mirror is: connecting, live, ended, failed.
    public var status: Status { tree.status }
    /// Why the mirror stopped following the session, when it failed.
    public var failure: RemoteError? { tree.failure }
    /// The last failure of a `path` change made by assignment (`setPath` throws instead).
    public var pathError: RemoteError? {
        get { tree.main.pathError }
        set { tree.main.pathError = newValue }
    }
    /// The session's schema.
    public var schema: SchemaResource { tree.schema }
    /// Events applied, and snapshots the mirror was rebuilt from (for tests and metrics).
    public var appliedEventCount: Int { tree.appliedEventCount }
    public var snapshotCount: Int { tree.snapshotCount }

    // MARK: - Reading

    /// The root screen.
    public var root: Screen? { screens.first }
    /// The topmost screen.
    public var top: Screen? { screens.last }

    /// This session's mutations that wait in the client's offline queue, oldest first
    /// (`RemoteTree.pendingMutations`).
    public var pendingMutations: [PendingMutation] { tree.pendingMutations }

    /// The screen with this id, if it is on the stack.
    public subscript(id id: ScreenID) -> Screen? { tree.main[id: id] }

    /// The mirror as the server would show it (`GET /v1/sessions/{id}`).
    public var resource: SessionResource { tree.resource }

    // MARK: - Following

    /// Starts following the session (once; a second call does nothing).
    public func start() { tree.start() }

    /// Stops following the session; the mirror keeps what it has.
    public func stop() { tree.stop() }

    /// Waits until the mirror has applied version `version` (the `version` a mutation answered).
    ///
    /// - Throws: the mirror's `failure`, or `CancellationError`.
    public func sync(to version: Int64) async throws { try await tree.sync(to: version) }

    /// Applies one item of the session's event stream, as `start()` does with each (see
    /// `RemoteTree.apply(_:)`); false when the item does not fit: feed it a snapshot next.
    @discardableResult
    public func apply(_ item: SessionStreamItem) -> Bool { tree.apply(item) }

    // MARK: - The path

    /// The names of the screens above the root, for `NavigationStack(path:)` (`RemoteTree.Stack.path`).
    ///
    /// Setting it sends one request that makes the server's stack match (see `setPath(_:)`); until
    /// the server's events arrive, it reads as what was set, so SwiftUI does not snap back. A
    /// failure lands in `pathError`, and the path reads the server's stack again.
    ///
    /// ```swift
    /// NavigationStack(path: $stack.path) {
    ///     HomeView().navigationDestination(for: String.self) { name in ScreenView(name: name) }
    /// }
    /// ```
    public var path: [String] {
        get { tree.main.path }
        set { tree.main.path = newValue }
    }

    /// Makes the screens above the root the ones in `target` with one request (`PathOperation`),
    /// keeping the screens that already match its start (by name): a pop to the last kept screen,
    /// a push, a path replace, or a replace of the screens above the last kept one. Returns once
    /// the mirror shows the result, with the request sent (none when nothing had to change).
    ///
    /// ```swift
    /// try await stack.setPath([ScreenSeed("Inbox"), ScreenSeed("Message", values: ["id": 7])])
    /// ```
    ///
    /// The request names the screens it keeps by id, so a change made meanwhile by another client
    /// is not undone: the last request to arrive wins.
    @discardableResult
    public func setPath(_ target: [ScreenSeed]) async throws -> [PathOperation] {
        try await tree.main.setPath(target).map { [$0] } ?? []
    }

    /// The core stack the main stack's events are applied to.
    var stack: ScreenStack<String> { tree.screenTree.main }
    /// The names asked for while a path change flies.
    var pendingPath: [String]? { tree.main.pendingPath?.map(\.name) }
}
