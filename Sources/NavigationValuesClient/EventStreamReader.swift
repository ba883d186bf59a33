import Foundation
import Logging
import NavigationValues
import NavigationValuesWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Reads an event stream for one iterator: opens the connection, splits its bytes into events,
/// and on every end or failure reconnects with `Last-Event-ID` set to the last event delivered,
/// dropping what it already delivered and starting again when the server skipped one. Not
/// Sendable: one iterating task owns it.
final class EventStreamReader {
    enum Source {
        case session(RemoteSession)
        case allSessions(HTTPTransport)
    }

    private let source: Source
    /// The seq of the last event (or snapshot) delivered; where a reconnection resumes.
    private(set) var cursor: Int64?
    private var wantsSnapshot: Bool
    /// Started with neither a cursor nor a snapshot: the session's version is read first, so a
    /// connection lost before the first event still resumes without a gap.
    private var startsLive: Bool
    private var isFinished = false

    private var connection: TransportStream?
    private var parser = ServerSentEventParser()
    private var pending: [ServerSentEvent] = []
    private var pendingIndex = 0
    private var deliveredOnThisConnection = false

    private var failures = 0
    /// A 401 already led to a refreshed token since the last connection that opened.
    private var refreshedAfter401 = false
    private var nextDelay: Duration?
    private var lastFailure: RemoteError?

    init(source: Source, after: Int64?, snapshot: Bool) {
        self.source = source
        cursor = after
        wantsSnapshot = snapshot
        if case .session = source { startsLive = after == nil && !snapshot } else { startsLive = false }
    }

    deinit {
        connection?.cancel()
    }

    private var transport: HTTPTransport {
        switch source {
        case .session(let session): session.transport
        case .allSessions(let transport): transport
        }
    }

    private var options: StreamOptions { transport.configuration.streams }

    // MARK: - Items

    /// The next item of a session's stream; nil once the session has ended. Runs on the caller's
    /// actor (`isolation`): a reader on the main actor reads and decodes there, without a hop to the
    /// global executor and back for every event.
    func nextItem(isolation: isolated (any Actor)? = #isolation) async throws -> SessionStreamItem? {
        while let frame = try await nextFrame() {
            if let item = try item(from: frame) { return item }
        }
        return nil
    }

    private func item(from frame: ServerSentEvent) throws -> SessionStreamItem? {
        let json = try parse(frame)
        if frame.event == SessionEvent.snapshotType {
            let session = try decode(json) { json throws(WireDecodingError) in try SessionResource(json: json) }
            delivered(session.version)
            wantsSnapshot = false
            return .snapshot(session)
        }
        let event = try decode(json) { json throws(WireDecodingError) in try ReceivedEvent(json: json) }
        if let cursor {
            // Every event once: what was delivered before a reconnection is not delivered again.
            guard event.seq > cursor else { return nil }
            guard event.seq == cursor + 1 else {
                // A gap (the server never leaves one): drop this connection, resume after the cursor.
                dropConnection()
                noteFailure(
                    RemoteError(
                        .invalidResponse, request: requestLabel, detail: "event \(event.seq) came after \(cursor)"))
                return nil
            }
        }
        delivered(event.seq)
        switch event {
        case .event(let recorded):
            if case .sessionEnded = recorded.event {
                isFinished = true
                dropConnection()
            }
            return .event(recorded)
        case .unrecognized(let other):
            return .unrecognized(other)
        }
    }

    /// The next event of the stream of every session.
    func tagged(_ frame: ServerSentEvent) throws -> TaggedEvent? {
        let json = try parse(frame)
        guard let session = json["session"]?.stringValue else { return nil }
        let event = try decode(json) { json throws(WireDecodingError) in try ReceivedEvent(json: json) }
        failures = 0
        return TaggedEvent(session: SessionID(session), event: event)
    }

    private func delivered(_ seq: Int64) {
        cursor = seq
        failures = 0
        lastFailure = nil
        deliveredOnThisConnection = true
    }

    // MARK: - Frames

    /// The next server-sent event, connecting and reconnecting as needed; nil once finished.
    func nextFrame(isolation: isolated (any Actor)? = #isolation) async throws -> ServerSentEvent? {
        while !isFinished {
            if pendingIndex < pending.count {
                pendingIndex += 1
                return pending[pendingIndex - 1]
            }
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
            if Task.isCancelled {
                dropConnection()
                throw CancellationError()
            }
            guard let connection else {
                try await connect()
                continue
            }
            let chunk = await connection.next()
            switch chunk {
            case .bytes(let data):
                connection.consumed(data.count)
                pending = parser.consume(data)
            case .head:
                continue
            case .end(let error):
                try await connectionEnded(error)
            case nil:
                if Task.isCancelled {
                    dropConnection()
                    throw CancellationError()
                }
                try await connectionEnded(nil)
            }
        }
        return nil
    }

    private func connectionEnded(_ error: URLError?, isolation: isolated (any Actor)? = #isolation) async throws {
        let hadEvents = deliveredOnThisConnection
        dropConnection()
        if let error, !HTTPTransport.isRetryable(error), error.code != .cancelled {
            throw RemoteError(
                .connectionFailed, request: requestLabel, detail: HTTPTransport.describe(error), underlying: error)
        }
        // An ended session's stream sends what is left and closes: when a clean end brought
        // nothing, ask whether the session has ended at our cursor, and finish if so.
        if error == nil, !hadEvents, case .session(let session) = source, let cursor,
            let current = try? await session.get(), current.state == .ended, current.version <= cursor
        {
            isFinished = true
            return
        }
        noteFailure(
            RemoteError(
                .connectionFailed, request: requestLabel,
                detail: error.map(HTTPTransport.describe) ?? "the stream ended", underlying: error))
    }

    private func noteFailure(_ error: RemoteError) {
        failures += 1
        lastFailure = error
    }

    private func dropConnection() {
        connection?.cancel()
        connection = nil
        pending.removeAll(keepingCapacity: true)
        pendingIndex = 0
        parser = ServerSentEventParser()
        deliveredOnThisConnection = false
    }

    // MARK: - Connecting

    private func connect(isolation: isolated (any Actor)? = #isolation) async throws {
        if failures > 0 {
            if let limit = options.maxConsecutiveFailures, failures > limit, let lastFailure {
                throw lastFailure
            }
            let delay = nextDelay ?? backoff()
            nextDelay = nil
            options.onReconnect?(
                ReconnectNotice(
                    after: cursor, consecutiveFailures: failures, reason: lastFailure?.detail ?? "", delay: delay))
            transport.configuration.logger?.notice(
                "stream reconnecting",
                metadata: [
                    "request": "\(requestLabel)", "after": "\(cursor.map(String.init) ?? "-")",
                    "failures": "\(failures)", "reason": "\(lastFailure?.detail ?? "")", "delay": "\(delay)",
                ])
            try await Task.sleep(for: delay)
        }
        if startsLive, case .session(let session) = source {
            let current = try await session.get()
            cursor = current.version
            startsLive = false
            if current.state == .ended {
                isFinished = true
                return
            }
        }
        let request = makeRequest()
        let token = try await transport.token(for: request.credential)
        let opened = try await transport.openStream(request, token: token, maxBufferedBytes: options.maxBufferedBytes)
        switch await opened.next() {
        case .head(200, _):
            connection = opened
            refreshedAfter401 = false
        case .head(let status, let headers):
            var body = Data()
            readBody: while let chunk = await opened.next() {
                switch chunk {
                case .bytes(let data): body.append(data)
                case .end: break readBody
                case .head: continue
                }
            }
            opened.cancel()
            if status == 401, !refreshedAfter401 {
                refreshedAfter401 = true
                // A token provider that has another token: connect again at once with it.
                if try await transport.refreshedToken(for: request.credential, rejected: token) != nil { return }
            }
            let answer = APIAnswer(status: status, headers: headers, body: body, attempts: failures + 1)
            let error = transport.error(for: answer, of: request)
            let policy = transport.configuration.retry
            guard policy.retriedStatuses.contains(status) else { throw error }
            nextDelay = policy.delay(after: failures + 1, retryAfter: answer.header("retry-after"))
            noteFailure(error)
        case .end(let error):
            opened.cancel()
            if let error, !HTTPTransport.isRetryable(error) {
                if error.code == .cancelled, Task.isCancelled { throw CancellationError() }
                throw RemoteError(
                    .connectionFailed, request: request.label, detail: HTTPTransport.describe(error), underlying: error)
            }
            noteFailure(
                RemoteError(
                    .connectionFailed, request: request.label,
                    detail: error.map(HTTPTransport.describe) ?? "the connection closed before an answer",
                    underlying: error))
        case .bytes:
            opened.cancel()
            noteFailure(RemoteError(.invalidResponse, request: request.label, detail: "body bytes before the head"))
        case nil:
            opened.cancel()
            throw CancellationError()
        }
    }

    private func backoff() -> Duration {
        let exponent = min(max(failures - 1, 0), 20)
        let ceiling = min(options.initialReconnectDelay * (1 << exponent), options.maxReconnectDelay)
        let half = ceiling / 2
        let nanoseconds = Int64(
            clamping: half.components.seconds * 1_000_000_000 + half.components.attoseconds / 1_000_000_000)
        return half + .nanoseconds(nanoseconds > 0 ? Int64.random(in: 0...nanoseconds) : 0)
    }

    private func makeRequest() -> APIRequest {
        switch source {
        case .session(let session):
            var request = APIRequest(
                method: "GET", path: session.path("events"), credential: session.credential,
                accept: "text/event-stream",
                timeout: options.idleTimeout)
            if wantsSnapshot, cursor == nil { request.query = [("snapshot", "1")] }
            request.lastEventID = cursor
            return request
        case .allSessions(let transport):
            return APIRequest(
                method: "GET", path: "/v1/events", credential: transport.admin, accept: "text/event-stream",
                timeout: options.idleTimeout)
        }
    }

    private var requestLabel: String { makeRequest().label }

    // MARK: - Decoding

    private func parse(_ frame: ServerSentEvent) throws -> JSONValue {
        do {
            return try JSONValue(parsing: frame.data)
        } catch {
            throw RemoteError(.invalidResponse, request: requestLabel, detail: "an event's data is not JSON: \(error)")
        }
    }

    private func decode<T>(_ json: JSONValue, _ decode: (JSONValue) throws(WireDecodingError) -> T) throws -> T {
        do {
            return try decode(json)
        } catch {
            throw RemoteError(.invalidResponse, request: requestLabel, detail: "unexpected event: \(error)")
        }
    }
}
