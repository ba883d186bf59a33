import Foundation
import Logging
import NavigationValues
import NavigationValuesWire
import Observation
import Synchronization

/// How a client keeps mutations made while the server cannot be reached
/// (`Configuration.offline`).
public struct OfflineOptions: Sendable {
    /// Mutations kept at most; one more is refused with `RemoteError.offlineQueueFull`.
    public var limit: Int
    /// Where the queue is kept across launches (a file the app names; it holds the sessions'
    /// tokens, so it is written readable by its owner only); nil: in memory only.
    public var file: URL?
    /// The wait before trying the server again after a round of attempts found it unreachable; it
    /// doubles after each such round, up to `maxRetryInterval`.
    public var retryInterval: Duration
    /// The longest wait between two rounds.
    public var maxRetryInterval: Duration

    /// At most `limit` (default 1,000) mutations, in memory or in `file`, tried again after 500 ms
    /// doubling to 30 s.
    public init(
        limit: Int = 1_000, file: URL? = nil, retryInterval: Duration = .milliseconds(500),
        maxRetryInterval: Duration = .seconds(30)
    ) {
        self.limit = max(1, limit)
        self.file = file
        self.retryInterval = retryInterval
        self.maxRetryInterval = maxRetryInterval
    }
}

/// A mutation kept while the server could not be reached, waiting its turn.
public struct PendingMutation: Sendable, Hashable, Identifiable, Codable {
    /// The queue's own id for it.
    public var id: String
    /// The session it changes.
    public var session: SessionID
    /// `POST`, `PUT`, `PATCH` or `DELETE`.
    public var method: String
    /// The percent-encoded path (`/v1/sessions/s_…/push`).
    public var path: String
    /// The query parameters, in order.
    public var query: [TransportRequest.QueryItem]
    /// The JSON body.
    public var body: JSONValue?
    /// The version it is to apply at, if it was sent with one.
    public var ifMatch: Int64?
    /// The key every attempt carries: however often it is sent, the server applies it once.
    public var idempotencyKey: String
    /// When it was queued.
    public var queuedAt: Date

    /// `METHOD /path`.
    public var label: String { "\(method) \(path)" }
}

/// The mutations a client keeps while its server cannot be reached (`Configuration.offline`), in
/// the order they were made, each with its `Idempotency-Key`: a mutation whose attempts all found
/// no server (the retry policy's) is queued, and so is every later one while the queue is not
/// empty, so they reach the server in order. One task sends them, the oldest first, each until the
/// server answers (after a failed round it waits `retryInterval`, doubling); each is applied once
/// however often it is sent. A call whose mutation is queued waits for its answer (cancelling it
/// stops the wait, not the mutation: `discard` does that). With a file, the queue survives the
/// app: a new client with the same file sends what is left.
///
/// ```swift
/// var configuration = NavigationValuesClient.Configuration()
/// configuration.offline = OfflineOptions(file: documents.appendingPathComponent("pending.json"))
/// let client = NavigationValuesClient(baseURL: url, configuration: configuration)
/// client.offlineQueue?.count          // what is waiting
/// client.offlineQueue?.model          // the same, observable on the main actor (SwiftUI)
/// ```
public final class OfflineQueue: Sendable {
    let options: OfflineOptions
    private let state = Mutex(State())
    private let logger: Logger?
    /// What `model` shows, posted to the main actor in order.
    private let revision = Atomic<UInt64>(0)
    /// The queue as an `@Observable` model on the main actor, for SwiftUI and mirrors.
    @MainActor public let model = PendingMutationsModel()

    private struct State {
        var entries: [Entry] = []
        /// Callers waiting for their mutation's answer, by id.
        var waiters: [String: CheckedContinuation<APIAnswer, any Error>] = [:]
        var delivering: Task<Void, Never>?
        var isStopped = false
        /// The last refusal of a queued mutation no caller waited for.
        var lastFailure: RemoteError?
    }

    /// A queued mutation with the token it is sent with (kept in the file, never shown).
    struct Entry: Codable, Sendable {
        var mutation: PendingMutation
        var token: String?
    }

    /// The file's form.
    private struct Stored: Codable {
        var version = 1
        var entries: [Entry]
    }

    init(options: OfflineOptions, logger: Logger?) {
        self.options = options
        self.logger = logger
        if let file = options.file, let data = try? Data(contentsOf: file) {
            do {
                let stored = try JSONDecoder().decode(Stored.self, from: data)
                state.withLock { $0.entries = Array(stored.entries.prefix(options.limit)) }
            } catch {
                // A file this build cannot read is left as it is (never overwritten by an empty queue).
                logger?.error(
                    "offline queue file unreadable", metadata: ["file": "\(file.path)", "error": "\(error)"])
                state.withLock { $0.isStopped = true }
            }
        }
        publish()
    }

    deinit {
        state.withLock { $0.delivering }?.cancel()
    }

    // MARK: - Reading and discarding

    /// How many mutations wait.
    public var count: Int { state.withLock { $0.entries.count } }

    /// The mutations that wait, oldest first.
    public var mutations: [PendingMutation] { state.withLock { $0.entries.map(\.mutation) } }

    /// The last refusal (an error answer) of a queued mutation whose caller was no longer waiting
    /// (it gave up, or the app was restarted in between).
    public var lastFailure: RemoteError? { state.withLock { $0.lastFailure } }

    /// Drops a waiting mutation: it is never sent (one being sent at this moment may still be
    /// applied). Its waiting caller gets `CancellationError`. Returns whether it was there.
    @discardableResult
    public func discard(_ id: PendingMutation.ID) throws -> Bool {
        let (removed, waiter) = state.withLock { state -> (Bool, CheckedContinuation<APIAnswer, any Error>?) in
            guard let index = state.entries.firstIndex(where: { $0.mutation.id == id }) else { return (false, nil) }
            state.entries.remove(at: index)
            return (true, state.waiters.removeValue(forKey: id))
        }
        guard removed else { return false }
        try save()
        publish()
        waiter?.resume(throwing: CancellationError())
        return true
    }

    /// Drops every waiting mutation.
    public func discardAll() throws {
        let waiters = state.withLock { state in
            state.entries = []
            defer { state.waiters = [:] }
            return state.waiters
        }
        try save()
        publish()
        for waiter in waiters.values { waiter.resume(throwing: CancellationError()) }
    }

    /// Waits until nothing is queued (every mutation sent and answered, or discarded).
    public func waitUntilEmpty() async throws {
        while count > 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    // MARK: - Queuing

    /// Whether a mutation must wait its turn: something is queued before it.
    var isHoldingMutations: Bool { state.withLock { !$0.entries.isEmpty } }

    /// Queues `request` (after the server could not be reached, or behind what is queued) and
    /// waits for its answer.
    ///
    /// - Throws: `RemoteError.offlineQueueFull` past the limit; `RemoteError` of its answer;
    ///   `CancellationError` when the caller is cancelled (the mutation stays queued) or it is
    ///   discarded.
    func enqueueAndWait(
        _ request: APIRequest, session: SessionID, token: String?, through transport: HTTPTransport
    ) async throws -> APIAnswer {
        let mutation = PendingMutation(
            id: UUID().uuidString, session: session, method: request.method, path: request.path,
            query: request.transportQuery, body: request.body, ifMatch: request.ifMatch,
            idempotencyKey: request.idempotencyKey ?? transport.configuration.idempotencyKeys.next(), queuedAt: Date())
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<APIAnswer, any Error>) in
                // Queued and waited for in one step, so that no answer can come before its waiter.
                let added = state.withLock { state -> Bool in
                    guard state.entries.count < options.limit else { return false }
                    state.entries.append(Entry(mutation: mutation, token: token))
                    if !Task.isCancelled { state.waiters[mutation.id] = continuation }
                    return true
                }
                guard added else {
                    continuation.resume(
                        throwing: RemoteError(
                            .offlineQueueFull, request: request.label,
                            detail:
                                "the server cannot be reached and \(options.limit) mutations already wait (OfflineOptions.limit)"
                        ))
                    return
                }
                do {
                    try save()
                } catch {
                    let waiter = state.withLock { state in
                        state.entries.removeAll { $0.mutation.id == mutation.id }
                        return state.waiters.removeValue(forKey: mutation.id)
                    }
                    waiter?.resume(
                        throwing: RemoteError(
                            .offlineQueueFull, request: request.label,
                            detail: "the offline queue's file cannot be written: \(error)"))
                    return
                }
                logger?.info("mutation queued offline", metadata: ["request": "\(request.label)", "count": "\(count)"])
                publish()
                startDelivering(through: transport)
                // Cancelled before it could wait: the mutation stays queued, the caller goes.
                if Task.isCancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: mutation.id) }?.resume(throwing: CancellationError())
        }
    }

    /// Starts the task that sends what is queued, unless it runs. It holds the queue and the
    /// transport only while it sends, so a client let go stops sending at its next wait.
    func startDelivering(through transport: HTTPTransport) {
        state.withLock { state in
            guard state.delivering == nil, !state.isStopped, !state.entries.isEmpty else { return }
            state.delivering = Task { [weak self, weak transport, options] in
                var wait = options.retryInterval
                while !Task.isCancelled {
                    let step: DeliveryStep
                    do {
                        guard let queue = self, let transport else { return }
                        step = await queue.deliverOldest(through: transport)
                    }
                    switch step {
                    case .sent:
                        wait = options.retryInterval
                    case .unreachable:
                        try? await Task.sleep(for: wait)
                        wait = min(wait * 2, options.maxRetryInterval)
                    case .done:
                        return
                    }
                }
            }
        }
    }

    enum DeliveryStep {
        /// The oldest mutation was answered.
        case sent
        /// The server could not be reached: wait, then try again.
        case unreachable
        /// Nothing is left (or the task was cancelled).
        case done
    }

    /// Sends the oldest mutation (with the retry policy's attempts) and hands its answer over.
    private func deliverOldest(through transport: HTTPTransport) async -> DeliveryStep {
        let next = state.withLock { state -> Entry? in
            guard let entry = state.entries.first, !Task.isCancelled, !state.isStopped else {
                state.delivering = nil
                return nil
            }
            return entry
        }
        guard let entry = next else { return .done }
        let request = APIRequest(
            method: entry.mutation.method, path: entry.mutation.path,
            query: entry.mutation.query.map { ($0.name, $0.value) }, body: entry.mutation.body,
            credential: Credential(session: entry.mutation.session, token: entry.token),
            ifMatch: entry.mutation.ifMatch, idempotencyKey: entry.mutation.idempotencyKey)
        let outcome: Result<APIAnswer, any Error>
        do {
            outcome = .success(try await transport.send(request))
        } catch let error as RemoteError where error.code == .connectionFailed {
            logger?.notice(
                "offline queue waiting for the server", metadata: ["request": "\(request.label)", "count": "\(count)"])
            return .unreachable
        } catch is CancellationError {
            state.withLock { $0.delivering = nil }
            return .done
        } catch {
            outcome = .failure(error)
        }
        delivered(entry.mutation, outcome, transport: transport, request: request)
        return .sent
    }

    /// Removes a mutation the server answered, and hands the answer to its caller.
    private func delivered(
        _ mutation: PendingMutation, _ outcome: Result<APIAnswer, any Error>, transport: HTTPTransport,
        request: APIRequest
    ) {
        let waiter = state.withLock { state -> CheckedContinuation<APIAnswer, any Error>? in
            state.entries.removeAll { $0.mutation.id == mutation.id }
            return state.waiters.removeValue(forKey: mutation.id)
        }
        do {
            try save()
        } catch {
            logger?.error("offline queue file not written", metadata: ["error": "\(error)"])
        }
        var result = outcome
        if case .success(let answer) = outcome, answer.status >= 300 {
            result = .failure(transport.error(for: answer, of: request))
        }
        if case .failure(let error) = result {
            let remote = error as? RemoteError
            logger?.info(
                "queued mutation refused", metadata: ["request": "\(request.label)", "error": "\(error)"])
            if waiter == nil { state.withLock { $0.lastFailure = remote } }
        } else {
            logger?.info("queued mutation sent", metadata: ["request": "\(request.label)", "left": "\(count)"])
        }
        publish()
        waiter?.resume(with: result)
    }

    /// Stops sending (the queue and its file stay as they are).
    func stop() {
        let task = state.withLock { state in
            state.isStopped = true
            defer { state.delivering = nil }
            return state.delivering
        }
        task?.cancel()
    }

    // MARK: - The file and the model

    private func save() throws {
        guard let file = options.file else { return }
        let entries = state.withLock { $0.entries }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(Stored(entries: entries))
        try data.write(to: file, options: .atomic)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
    }

    /// Posts the queue as it is now to the main actor's model.
    private func publish() {
        let (mutations, failure) = state.withLock { ($0.entries.map(\.mutation), $0.lastFailure) }
        let number = revision.add(1, ordering: .relaxed).newValue
        Task { @MainActor [model] in
            model.update(mutations, failure: failure, revision: number)
        }
    }
}

/// The offline queue as the main actor sees it (`OfflineQueue.model`): observable with
/// Observation, so SwiftUI views and mirrors redraw when a mutation is queued or sent.
@MainActor
@Observable
public final class PendingMutationsModel {
    /// The mutations that wait, oldest first.
    public private(set) var mutations: [PendingMutation] = []
    /// The last refusal of a queued mutation no caller waited for.
    public private(set) var lastFailure: RemoteError?
    @ObservationIgnored private var revision: UInt64 = 0

    /// How many wait.
    public var count: Int { mutations.count }

    /// The mutations of one session that wait, oldest first.
    public func mutations(of session: SessionID) -> [PendingMutation] {
        mutations.filter { $0.session == session }
    }

    nonisolated init() {}

    func update(_ mutations: [PendingMutation], failure: RemoteError?, revision: UInt64) {
        // Posts may run out of order: only a newer one applies.
        guard revision > self.revision else { return }
        self.revision = revision
        if self.mutations != mutations { self.mutations = mutations }
        lastFailure = failure
    }
}
