import Foundation
import NavigationValues
import NavigationValuesWire
import Observation

/// A live, observable copy of a whole remote session as a user sees it (docs/Stacks.md): the main
/// stack and every tab with its screens, which one is selected, every presentation (a sheet or a
/// full-screen cover, nested) with its own screens, and the screen a user sees. It is built from the
/// core library's `ScreenTree`, so every screen reads its forward values, handlers and received
/// preferences with the core's own rules, and it is changed only by the server's events.
///
/// ```swift
/// let tree = try await RemoteTree.connect(to: session)
/// tree.selection                                   // "main" or a tab: TabView(selection:)
/// tree.stack(StackID("search"))?.path              // a tab's screens above its root
/// tree.presentation(presentedBy: screen.id)        // what a screen presents: .sheet(item:)
/// tree.visibleScreen?.resolved(Title.self)         // read locally, observed
/// ```
///
/// It starts from a snapshot of the session and follows its event stream, which reconnects and
/// resumes by itself. Each event is applied as the core change it records (a push, a pop, a
/// dismissal…), and what the core then did is checked against what the event says the server did
/// (the screens popped, the presentations dismissed, the screens a write changed): an event that
/// does not fit, or of a type it does not know, makes it start again from a new snapshot. After the
/// last event it equals `GET /v1/sessions/{id}` exactly (`resource`). It lives on the main actor, as
/// SwiftUI state does.
///
/// Reads are local; changes go through `session`, a screen's `remote`, or the bindings (`selection`,
/// a stack's `path` and routes, presentations), which read as set while their request flies.
@MainActor
@Observable
public final class RemoteTree {
    /// Where the mirror is.
    public enum Status: Sendable, Equatable {
        /// Waiting for the first snapshot.
        case connecting
        /// Following the session's events.
        case live
        /// The session ended; nothing changes any more.
        case ended
        /// The stream failed for good (the session was purged, the token refused…).
        case failed(RemoteError.Code)
    }

    /// The session mirrored; send changes through it (or through a screen's `remote`).
    @ObservationIgnored public let session: RemoteSession
    /// The main stack, which every session has.
    @ObservationIgnored public let main: Stack
    /// The main stack and the tabs, in their order (the main stack first): a `TabView`'s tabs.
    public internal(set) var tabs: [Stack] = []
    /// The presentations, in the order they were presented (a presenter's stack comes first).
    public internal(set) var presentations: [Stack] = []
    /// The selected stack as the server has it: the main stack or a tab (`selection` reads as set
    /// while a change flies).
    public internal(set) var selectedStackID: StackID = .main
    /// The id of the screen a user sees: the topmost screen of the selected stack, or of what it
    /// presents, and so on.
    public internal(set) var visibleScreenID: ScreenID?
    /// The version of the last event applied.
    public internal(set) var version: Int64 = 0
    /// Whether the session is active or ended.
    public internal(set) var state: SessionState = .active
    /// Where the mirror is: connecting, live, ended, failed.
    public internal(set) var status: Status = .connecting
    /// Why the mirror stopped following the session, when it failed.
    public internal(set) var failure: RemoteError?
    /// The session's schema.
    public internal(set) var schema = SchemaResource()

    /// The core tree the events are applied to.
    @ObservationIgnored var screenTree = ScreenTree<String>()
    @ObservationIgnored var keys = SchemaValueKeys(schema: SchemaResource())
    @ObservationIgnored var stackObjects: [StackID: Stack] = [:]
    @ObservationIgnored var schemaJSON: JSONValue = [:]
    @ObservationIgnored var createdAt = Date(timeIntervalSince1970: 0)
    @ObservationIgnored var updatedAt = Date(timeIntervalSince1970: 0)
    @ObservationIgnored var origin: SessionOrigin?
    /// Set by an event that changed which screens or stacks there are, so `refresh()` runs.
    @ObservationIgnored var structureChanged = false
    @ObservationIgnored var followTask: Task<Void, Never>?
    @ObservationIgnored var waiters: [UInt64: Waiter] = [:]
    @ObservationIgnored var nextWaiter: UInt64 = 0
    /// Changes asked through the bindings, in flight, one at a time per binding (see `+Bindings`).
    @ObservationIgnored var selectionTask: Task<Void, Never>?
    @ObservationIgnored var presentationTasks: [ScreenID: Task<Void, Never>] = [:]
    /// The selection asked for, while its request flies.
    var pendingSelection: StackID?
    /// Presentations asked for or dismissed by their presenter, while the request flies.
    var pendingPresentations: [ScreenID: PendingPresentation] = [:]
    /// The last failure of a `selection` change made by assignment (`select(_:)` throws instead).
    public var selectionError: RemoteError?
    /// The last failure of a presentation or dismissal asked through `setPresentation` (the awaited
    /// calls throw instead).
    public var presentationError: RemoteError?
    /// Events applied, and snapshots the mirror was rebuilt from (for tests and metrics).
    @ObservationIgnored public internal(set) var appliedEventCount = 0
    @ObservationIgnored public internal(set) var snapshotCount = 0

    struct Waiter {
        var version: Int64
        var continuation: CheckedContinuation<Void, any Error>
    }

    /// A mirror of `session` that does not follow it yet: call `start()`, or use `connect(to:)`.
    public init(session: RemoteSession) {
        self.session = session
        main = Stack(id: .main, kind: .main, presenter: nil)
        main.tree = self
        stackObjects[.main] = main
        tabs = [main]
    }

    /// A mirror of `session`, returned once its first snapshot is applied.
    ///
    /// - Throws: `RemoteError` when the session cannot be read (not found, token refused).
    public static func connect(to session: RemoteSession) async throws -> RemoteTree {
        let tree = RemoteTree(session: session)
        tree.start()
        try await tree.sync(to: 0)
        return tree
    }

    isolated deinit {
        followTask?.cancel()
    }

    // MARK: - Reading

    /// Every stack: the main stack and the tabs, then the presentations.
    public var stacks: [Stack] { tabs + presentations }

    /// The stack with this id (`main`, a tab's name, a presentation's id), if the session has it.
    public func stack(_ id: StackID) -> Stack? {
        stacks.first { $0.id == id }
    }

    /// The selected stack as the server has it (the main stack or a tab).
    public var selectedStack: Stack { stack(selectedStackID) ?? main }

    /// The screen a user sees.
    public var visibleScreen: Screen? {
        guard let id = visibleScreenID else { return nil }
        return screen(id: id)
    }

    /// The screen with this id, in whichever stack holds it.
    public func screen(id: ScreenID) -> Screen? {
        for stack in stacks {
            if let screen = stack.screens.last(where: { $0.id == id }) { return screen }
        }
        return nil
    }

    /// This session's mutations that wait in the client's offline queue (`Configuration.offline`),
    /// oldest first: made while the server could not be reached, sent when it can be again, each
    /// then shown by its event like any change. Observed (it reads the queue's main-actor model);
    /// empty without an offline queue.
    public var pendingMutations: [PendingMutation] {
        session.transport.offlineQueue?.model.mutations(of: session.id) ?? []
    }

    /// The stack the screen with this id presents, nil when it presents none (as the server has
    /// it; `presentation(presentedBy:)` reads as asked while a change flies).
    public func stack(presentedBy screen: ScreenID) -> Stack? {
        presentations.first { $0.presenter == screen }
    }

    /// The mirror as the server shows it (`GET /v1/sessions/{id}`).
    public var resource: SessionResource {
        let (screens, stacks) = screenTree.resources(keys: keys)
        return SessionResource(
            id: session.id, version: version, state: state, createdAt: createdAt, updatedAt: updatedAt,
            schema: schemaJSON, screens: screens, selectedStack: screenTree.selectedStackID,
            visibleScreen: screenTree.visibleScreenID, stacks: stacks, origin: origin)
    }

    // MARK: - Following

    /// Starts following the session (once; a second call does nothing).
    public func start() {
        guard followTask == nil else { return }
        status = .connecting
        followTask = Task { [weak self, session] in
            var restarts = 0
            while !Task.isCancelled {
                do {
                    var needsSnapshot = false
                    for try await item in session.events(snapshot: true) {
                        guard let self else { return }
                        if !self.handle(item) {
                            needsSnapshot = true
                            break
                        }
                    }
                    guard needsSnapshot else { return }
                    restarts += 1
                    // A server that keeps sending what we cannot apply: back off, never spin.
                    if restarts > 1 { try await Task.sleep(for: .milliseconds(min(5_000, 50 << min(restarts, 7)))) }
                } catch is CancellationError {
                    return
                } catch {
                    self?.fail(
                        error as? RemoteError ?? RemoteError(.invalidResponse, request: "events", detail: "\(error)"))
                    return
                }
            }
        }
    }

    /// Stops following the session; the mirror keeps what it has.
    public func stop() {
        followTask?.cancel()
        followTask = nil
    }

    /// Waits until the mirror has applied version `version` (the `version` a mutation answered).
    ///
    /// - Throws: the mirror's `failure`, or `CancellationError`.
    public func sync(to version: Int64) async throws {
        if self.version >= version, status != .connecting { return }
        if let failure { throw failure }
        if status == .ended {
            throw RemoteError(
                .gone, request: "sync", detail: "the session ended at version \(self.version), before \(version)")
        }
        let id = nextWaiter
        nextWaiter += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                waiters[id] = Waiter(version: version, continuation: continuation)
            }
        } onCancel: {
            Task { @MainActor [weak self] in
                self?.waiters.removeValue(forKey: id)?.continuation.resume(throwing: CancellationError())
            }
        }
    }

    /// Applies one item of the session's event stream, as `start()` does with each: for a mirror
    /// fed by a reader of its own (the long poll, a recorded history). A snapshot replaces
    /// everything; an event must follow `version`. Returns false when the item does not fit (an
    /// event out of order, one the mirror's tree refuses or that did something else there than
    /// on the server, or one of a type it does not know): feed it a snapshot next. Do not use it
    /// on a mirror that `start()` follows.
    @discardableResult
    public func apply(_ item: SessionStreamItem) -> Bool {
        handle(item)
    }

    /// Applies one item of the stream; false when the mirror must start again from a snapshot.
    func handle(_ item: SessionStreamItem) -> Bool {
        switch item {
        case .snapshot(let session):
            rebuild(from: session)
            snapshotCount += 1
        case .event(let event):
            guard status != .connecting, event.seq == version + 1 else { return false }
            let applied = apply(event.event, seq: event.seq, at: event.at)
            // What an event changed is shown even when it did not fit, until the new snapshot.
            if structureChanged { refresh() }
            guard applied else { return false }
            version = event.seq
            updatedAt = event.at
            appliedEventCount += 1
        case .unrecognized:
            return false
        }
        if state == .ended { status = .ended } else if status == .connecting { status = .live }
        resumeWaiters()
        return true
    }

    private func fail(_ error: RemoteError) {
        failure = error
        status = .failed(error.code)
        for (_, waiter) in waiters { waiter.continuation.resume(throwing: error) }
        waiters = [:]
    }

    private func resumeWaiters() {
        guard !waiters.isEmpty else { return }
        for (id, waiter) in waiters where waiter.version <= version {
            waiters.removeValue(forKey: id)
            waiter.continuation.resume()
        }
    }
}
