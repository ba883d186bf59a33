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
    /// Held while the queue changes and its file is written, so the file always ends with the
    /// latest queue and a change is on disk before anyone waiting on the file's lock goes on.
    private let fileLock = Mutex(())
    private let logger: Logger?
    /// The queue as an `@Observable` model on the main actor, for SwiftUI and mirrors.
    @MainActor public let model = PendingMutationsModel()

    private struct State {
        var entries: [Entry] = []
        /// Callers waiting for their mutation's answer, by id.
        var waiters: [String: CheckedContinuation<APIAnswer, any Error>] = [:]
        /// The task that sends, and its number (a task whose number is no longer this one stops).
        var delivering: Task<Void, Never>?
        var generation: UInt64 = 0
        /// The mutation being sent now.
        var sending: String?
        /// What the task sends through (not kept alive by the queue).
        weak var transport: HTTPTransport?
        var isStopped = false
        /// The last refusal of a queued mutation no caller waited for.
        var lastFailure: RemoteError?
        /// The number of the last post to `model` (posts may run out of order; the newest wins).
        var revision: UInt64 = 0
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

    /// Drops a waiting mutation: it is never sent, unless it was being sent at this very moment
    /// and had reached the server (then the server applies it once). Its waiting caller gets
    /// `CancellationError`. Returns whether it was there.
    @discardableResult
    public func discard(_ id: PendingMutation.ID) throws -> Bool {
        try drop { $0.mutation.id == id }
    }

    /// Drops every waiting mutation (as `discard` does each).
    public func discardAll() throws {
        _ = try drop { _ in true }
    }

    /// Waits until nothing is queued (every mutation sent and answered, or discarded) and the file
    /// says so.
    public func waitUntilEmpty() async throws {
        while count > 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        fileLock.withLock { _ in }
    }

    private func drop(where matches: (Entry) -> Bool) throws -> Bool {
        let (dropped, waiters, interrupted) = try change { state in
            let dropped = state.entries.filter(matches).map(\.mutation.id)
            state.entries.removeAll(where: matches)
            let waiters = dropped.compactMap { state.waiters.removeValue(forKey: $0) }
            // The one being sent is cut short; a new task sends what is left.
            var interrupted: Task<Void, Never>?
            if let sending = state.sending, dropped.contains(sending) {
                interrupted = state.delivering
                state.delivering = nil
                state.sending = nil
                state.generation += 1
            }
            return (dropped, waiters, interrupted)
        }
        interrupted?.cancel()
        publish()
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
        if let transport = state.withLock({ $0.transport }) { startDelivering(through: transport) }
        return !dropped.isEmpty
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
                let added: Bool
                do {
                    added = try change { state in
                        guard state.entries.count < options.limit else { return false }
                        state.entries.append(Entry(mutation: mutation, token: token))
                        if !Task.isCancelled { state.waiters[mutation.id] = continuation }
                        return true
                    }
                } catch {
                    _ = try? change { state in
                        state.entries.removeAll { $0.mutation.id == mutation.id }
                        state.waiters[mutation.id] = nil
                    }
                    continuation.resume(
                        throwing: RemoteError(
                            .offlineQueueFull, request: request.label,
                            detail: "the offline queue's file cannot be written: \(error)"))
                    return
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

    /// Starts the task that sends what is queued, unless one runs. It holds the queue and the
    /// transport only while it sends, so a client let go stops sending at its next wait.
    func startDelivering(through transport: HTTPTransport) {
        state.withLock { state in
            state.transport = transport
            guard state.delivering == nil, !state.isStopped, !state.entries.isEmpty else { return }
            state.generation += 1
            let generation = state.generation
            state.delivering = Task { [weak self, weak transport, options] in
                var wait = options.retryInterval
                while !Task.isCancelled {
                    let step: DeliveryStep
                    do {
                        guard let queue = self, let transport else { return }
                        step = await queue.deliverOldest(through: transport, generation: generation)
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
        /// Nothing is left, or this task was replaced or cancelled.
        case done
    }

    /// Sends the oldest mutation (with the retry policy's attempts) and hands its answer over.
    private func deliverOldest(through transport: HTTPTransport, generation: UInt64) async -> DeliveryStep {
        let next = state.withLock { state -> Entry? in
            guard state.generation == generation else { return nil }
            guard let entry = state.entries.first, !Task.isCancelled, !state.isStopped else {
                state.delivering = nil
                return nil
            }
            state.sending = entry.mutation.id
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
        } catch let error as RemoteError where error.code == .connectionFailed && !Task.isCancelled {
            state.withLock { if $0.generation == generation { $0.sending = nil } }
            logger?.notice(
                "offline queue waiting for the server", metadata: ["request": "\(request.label)", "count": "\(count)"])
            return .unreachable
        } catch {
            if Task.isCancelled || error is CancellationError {
                return .done
            }
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
        var result = outcome
        if case .success(let answer) = outcome, answer.status >= 300 {
            result = .failure(transport.error(for: answer, of: request))
        }
        let failure: RemoteError? = if case .failure(let error) = result { error as? RemoteError } else { nil }
        let waiter: CheckedContinuation<APIAnswer, any Error>?
        do {
            waiter = try change { state in
                state.entries.removeAll { $0.mutation.id == mutation.id }
                if state.sending == mutation.id { state.sending = nil }
                let waiter = state.waiters.removeValue(forKey: mutation.id)
                if waiter == nil, let failure { state.lastFailure = failure }
                return waiter
            }
        } catch {
            logger?.error("offline queue file not written", metadata: ["error": "\(error)"])
            waiter = state.withLock { $0.waiters.removeValue(forKey: mutation.id) }
        }
        if let failure {
            logger?.info("queued mutation refused", metadata: ["request": "\(request.label)", "error": "\(failure)"])
        } else {
            logger?.info("queued mutation sent", metadata: ["request": "\(request.label)", "left": "\(count)"])
        }
        publish()
        waiter?.resume(with: result)
    }

    // MARK: - The file and the model

    /// Applies `body` to the queue and writes the file (when there is one) before anyone else may
    /// change it; the change stays when the write fails, which is thrown.
    private func change<T>(_ body: (inout State) -> T) throws -> T {
        try fileLock.withLock { _ in
            let (result, entries) = state.withLock { state in (body(&state), state.entries) }
            guard let file = options.file else { return result }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try encoder.encode(Stored(entries: entries)).write(to: file, options: .atomic)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)
            return result
        }
    }

    /// Posts the queue as it is now to the main actor's model.
    private func publish() {
        let (mutations, failure, number) = state.withLock { state in
            state.revision += 1
            return (state.entries.map(\.mutation), state.lastFailure, state.revision)
        }
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
