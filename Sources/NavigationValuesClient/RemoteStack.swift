import Foundation
import NavigationValues
import NavigationValuesWire
import Observation

/// A live, observable copy of a remote session's main stack, built from the core library's
/// `ScreenContext`s and changed only by the server's events: an app reads forward values and
/// received preferences locally, and observes them with Observation (SwiftUI), as it would with the
/// seed on one device, while every change goes to the server.
///
/// ```swift
/// let stack = try await RemoteStack.connect(to: session)
/// stack.top?.resolved(Title.self)                     // read locally, observed
/// let result = try await stack.top?.remote.set(Title.self, "Inbox")
/// try await stack.sync(to: result?.version ?? 0)      // the mirror has seen the change
/// NavigationStack(path: $stack.path) { … }            // SwiftUI: setting the path sends the changes
/// ```
///
/// It starts from a snapshot of the session and follows its event stream, which reconnects and
/// resumes by itself; an event it cannot apply (or of a type it does not know) makes it start
/// again from a new snapshot. After the last event it equals `GET /v1/sessions/{id}` exactly
/// (`resource`). It lives on the main actor, as SwiftUI state does.
///
/// A session with several stacks (docs/Stacks.md): the mirror follows the main stack, the one
/// docs/API.md's endpoints address. Changes to tabs and presentations are applied as what they do to the
/// main stack (usually nothing: separate stacks share nothing, and a presentation's writes stay in
/// it), so it keeps following without starting again; `resource` then shows the main stack only.
@MainActor
@Observable
public final class RemoteStack {
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
    /// The screens, root first.
    public internal(set) var screens: [Screen] = []
    /// The version of the last event applied.
    public internal(set) var version: Int64 = 0
    /// Whether the session is active or ended.
    public internal(set) var state: SessionState = .active
    /// Where the mirror is: connecting, live, ended, failed.
    public internal(set) var status: Status = .connecting
    /// Why the mirror stopped following the session, when it failed.
    public internal(set) var failure: RemoteError?
    /// The last failure of a `path` change made by assignment (`setPath` throws instead).
    public var pathError: RemoteError?
    /// The session's schema.
    public internal(set) var schema = SchemaResource()

    @ObservationIgnored var stack = ScreenStack<String>()
    /// The screens of the session's other stacks (tabs, presentations), which are not mirrored.
    @ObservationIgnored var otherScreens: Set<ScreenID> = []
    @ObservationIgnored var schemaJSON: JSONValue = [:]
    @ObservationIgnored var createdAt = Date(timeIntervalSince1970: 0)
    @ObservationIgnored var updatedAt = Date(timeIntervalSince1970: 0)
    @ObservationIgnored var followTask: Task<Void, Never>?
    @ObservationIgnored var waiters: [UInt64: Waiter] = [:]
    @ObservationIgnored var nextWaiter: UInt64 = 0
    @ObservationIgnored var pathTask: Task<Void, Never>?
    var pendingPath: [String]?
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
    }

    /// A mirror of `session`, returned once its first snapshot is applied.
    ///
    /// - Throws: `RemoteError` when the session cannot be read (not found, token refused).
    public static func connect(to session: RemoteSession) async throws -> RemoteStack {
        let stack = RemoteStack(session: session)
        stack.start()
        try await stack.waitForSnapshot()
        return stack
    }

    isolated deinit {
        followTask?.cancel()
    }

    // MARK: - Reading

    /// The root screen.
    public var root: Screen? { screens.first }
    /// The topmost screen.
    public var top: Screen? { screens.last }

    /// The screen with this id, if it is on the stack.
    public subscript(id id: ScreenID) -> Screen? { screens.last { $0.id == id } }

    /// The mirror as the server would show it (`GET /v1/sessions/{id}`).
    public var resource: SessionResource {
        var resolved = schema.values.mapValues(\.defaultValue)
        var result: [ScreenResource] = []
        let entries = stack.entries
        for (index, entry) in entries.enumerated() {
            let context = entry.context
            let values = context.localNamedValues
            for (name, value) in values { resolved[name] = value }
            var handlers: [String: HandlerResource] = [:]
            for name in context.namedPreferenceHandlerKeys {
                handlers[name] = HandlerResource(passBack: context.preferenceHandlerPassesBack(named: name) ?? false)
            }
            result.append(
                ScreenResource(
                    id: entry.id, index: index, name: entry.element, role: context.role,
                    previous: index > 0 ? entries[index - 1].id : nil,
                    next: index + 1 < entries.count ? entries[index + 1].id : nil, values: values, resolved: resolved,
                    preferences: context.receivedNamedPreferences, handlers: handlers))
        }
        return SessionResource(
            id: session.id, version: version, state: state, createdAt: createdAt, updatedAt: updatedAt,
            schema: schemaJSON, screens: result)
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

    /// Waits for the first snapshot.
    func waitForSnapshot() async throws {
        try await sync(to: 0)
    }

    /// Applies one item of the session's event stream, as `start()` does with each: for a mirror
    /// fed by a reader of its own (the long poll, a recorded history). A snapshot replaces
    /// everything; an event must follow `version`. Returns false when the item does not fit (an
    /// event out of order, one that names a screen the mirror lacks, or one of a type it does not
    /// know): feed it a snapshot next. Do not use it on a mirror that `start()` follows.
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
            guard status != .connecting, event.seq == version + 1, apply(event) else { return false }
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
