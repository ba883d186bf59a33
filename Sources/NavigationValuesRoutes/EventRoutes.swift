import Foundation
import HTTPCore
import NavigationValues
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

/// The reading side of a session's history (docs/API.md, Events): the SSE stream, the JSON long poll,
/// paged history, replay, and the admin stream of every session.
struct EventRoutes: Sendable {
    let routes: SessionRoutes
    let hub: EventHub

    var service: SessionService { routes.service }
    var store: any SessionStore { routes.store }
    /// Bytes of events one page (of history, a long poll, a stream's catch-up) holds at most;
    /// a page always holds at least one event.
    var pageBytes: Int { routes.maxPageBytes }

    func register(on router: Router) {
        router.get("/v1/sessions/{id}/events") { request in try await events(request) }
        router.get("/v1/sessions/{id}/history") { request in try await history(request) }
        router.get("/v1/sessions/{id}/replay") { request in try await replay(request) }
        router.get("/v1/events") { request in try await allEvents(request) }
    }

    // MARK: - One session's events

    private func events(_ request: Request) async throws -> Response {
        let id = routes.sessionID(request)
        let credential = try await routes.streamCredential(request)
        let wantsStream = request.headers["accept"]?.lowercased().contains("text/event-stream") ?? false
        let isSnapshot = try routes.booleanQuery(request, "snapshot")
        var cursor: Int64?
        if let lastEventID = request.headers["last-event-id"], wantsStream {
            guard let value = Int64(HeaderValue.trimmed(lastEventID)), value >= 0 else {
                throw APIError(.unprocessable, "Last-Event-ID must be an event seq")
            }
            cursor = value
        }
        if let after = request.query["after"] {
            guard let value = Int64(after), value >= 0 else {
                throw APIError(.unprocessable, "after must be a non-negative integer")
            }
            cursor = value
        }
        guard wantsStream else {
            let wait = try routes.integerQuery(request, "wait", default: 0, range: 0...60)
            return try await longPoll(id, credential: credential, after: cursor ?? 0, wait: wait)
        }
        // Subscribe first, then look at the session: every event committed after the look
        // arrives through the subscription, every one before it is in the store.
        let subscription = try hub.subscribe(to: id)
        let head: ReaderHead
        do {
            head = try await readerHead(of: id, credential: credential, snapshot: isSnapshot && cursor == nil)
            if let cursor { try await checkAvailable(id, after: cursor) }
        } catch {
            subscription.cancel()
            throw error
        }
        let start = cursor ?? head.version
        // What the stream needs of the head, taken out of it before the stream starts: its closure
        // is kept for as long as the client stays subscribed, so it holds a few scalars and the
        // snapshot's bytes rather than the head and its whole SessionResource.
        let snapshot = head.snapshot.map { (version: String(head.version), text: $0.json.serialized()) }
        let isEnded = head.isEnded
        return Response(
            status: .ok,
            headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no"]
        ) { writer in
            try await stream(
                id, subscription: subscription, from: start, snapshot: snapshot, isEnded: isEnded, writer: writer)
        }
    }

    // A task keeps the slabs that held its async frames until it ends, so whatever a stream's
    // task once awaited through, every idle stream keeps. So the stream's reads of the store
    // (its first catch-up and any later one) run in tasks of their own (`ResponseWriter.aside`), and its
    // steps are functions of their own, never inlined into the loop that waits: `events-bench
    // idle` measured 6.3 KB of heap per idle stream with one function for everything, 4.8 KB so.

    /// The stream's body: the snapshot, the catch-up from the store, then the live events.
    @inline(never)
    private func stream(
        _ id: SessionID, subscription: Subscription, from start: Int64,
        snapshot: (version: String, text: String)?, isEnded: Bool, writer: ResponseWriter
    ) async throws {
        writer.onClose { subscription.cancel() }
        defer { subscription.cancel() }
        // Catch up from the store, a page (bounded by bytes) at a time, then follow the
        // subscription, skipping what was sent and filling any gap from the store: the table
        // is the truth, the hub only wakes us (an event another instance committed may arrive
        // after a later one of ours).
        var last = start
        if try await catchUp(id, after: &last, upTo: nil, writer: writer, snapshot: snapshot) || isEnded { return }
        // Between items the stream is parked: the hub writes the next events in order
        // straight to the connection, while it has room, and the task sleeps on (see
        // EventHub). Whatever wakes the task finds `last` moved past what was written so.
        var items = subscription.items.makeAsyncIterator()
        while true {
            subscription.park(after: last, on: writer)
            guard let item = await items.next() else { return }
            last = max(last, subscription.unpark())
            if try await deliver(item, id, subscription: subscription, after: &last, writer: writer) { return }
        }
    }

    /// Writes what one item of the subscription asks for; true when the stream is done.
    @inline(never)
    private func deliver(
        _ item: EventHub.Item, _ id: SessionID, subscription: Subscription, after last: inout Int64,
        writer: ResponseWriter
    ) async throws -> Bool {
        switch item {
        case .keepAlive:
            try await writer.writeComment("keep-alive")
            return false
        case .resync:
            return try await catchUp(id, after: &last, upTo: nil, writer: writer)
        case .event(let event, let frame, _):
            // The event's bytes stay charged to this subscriber until the write returns,
            // which is once the connection has room for them.
            defer { subscription.release(item) }
            guard event.seq > last else { return false }
            if event.seq > last + 1 {
                if try await catchUp(id, after: &last, upTo: event.seq - 1, writer: writer) { return true }
            }
            guard event.seq > last else { return false }
            try await writer.write(frame.bytes { event.frame })
            last = event.seq
            return event.isSessionEnded
        }
    }

    /// Writes the stored events after `last` (up to `end`, or all), a page bounded by count and
    /// by bytes at a time, advancing `last`; true when one of them ended the session. A stream's
    /// first catch-up writes its `snapshot` before them.
    ///
    /// It runs in a task of its own: reading the store awaits through several layers, whose
    /// frames would otherwise stay in the stream task's slabs for as long as the stream lasts.
    @inline(never)
    private func catchUp(
        _ id: SessionID, after last: inout Int64, upTo end: Int64?, writer: ResponseWriter,
        snapshot: (version: String, text: String)? = nil
    ) async throws -> Bool {
        let from = last
        let outcome = try await writer.aside {
            if let snapshot {
                try await writer.writeEvent(id: snapshot.version, event: SessionEvent.snapshotType, data: snapshot.text)
            }
            var last = from
            let ended = try await catchUpInPlace(id, after: &last, upTo: end, writer: writer)
            return (ended: ended, last: last)
        }.value
        last = outcome.last
        return outcome.ended
    }

    @inline(never)
    private func catchUpInPlace(
        _ id: SessionID, after last: inout Int64, upTo end: Int64?, writer: ResponseWriter
    ) async throws -> Bool {
        while end.map({ last < $0 }) ?? true {
            let wanted = end.map { Int(min(500, $0 - last)) } ?? 500
            let page = try await store.eventPage(of: id, after: last, limit: wanted, maxBytes: pageBytes)
            for event in page.events {
                try await writer.writeEvent(event)
                last = event.seq
                if event.isSessionEnded { return true }
            }
            if !page.hasMore { break }
        }
        return false
    }

    /// 410 when the events after `cursor` are no longer all stored: compaction removed those up
    /// to the session's compacted seq, which the answer names as the oldest a reader may ask
    /// for (as etcd answers a watch from a compacted revision).
    func checkAvailable(_ id: SessionID, after cursor: Int64) async throws {
        guard let access = try await store.access(to: id), cursor < access.compactedSeq else { return }
        throw SessionError.compacted(
            "events 1 to \(access.compactedSeq) of session \(id.rawValue) were compacted; "
                + "ask for events after \(access.compactedSeq) or later",
            oldestSeq: access.compactedSeq)
    }

    private func longPoll(_ id: SessionID, credential: Credential, after: Int64, wait: Int64) async throws -> Response {
        let subscription = try hub.subscribe(to: id)
        defer { subscription.cancel() }
        _ = try await readerHead(of: id, credential: credential, snapshot: false)
        try await checkAvailable(id, after: after)
        var page = try await store.eventPage(of: id, after: after, limit: 1_000, maxBytes: pageBytes).events
        if page.isEmpty, wait > 0 {
            let waiter = Task {
                for await item in subscription.items {
                    if case .event(let event, _, _) = item, event.seq > after { return true }
                }
                return false
            }
            let timer = Task {
                try? await Task.sleep(for: .seconds(wait))
                subscription.cancel()
            }
            if await waiter.value {
                page = try await store.eventPage(of: id, after: after, limit: 1_000, maxBytes: pageBytes).events
            }
            timer.cancel()
        }
        let last = page.last?.seq ?? after
        let body = "{\"events\":[" + page.map(\.json).joined(separator: ",") + "],\"last\":\(last)}"
        return rawJSON(body)
    }

    // MARK: - History and replay

    private func history(_ request: Request) async throws -> Response {
        let id = routes.sessionID(request)
        let credential = try await routes.requireCredential(request)
        let after = try routes.integerQuery(request, "after", default: 0, range: 0...Int64.max)
        let limit = try routes.integerQuery(request, "limit", default: 100, range: 1...1_000)
        _ = try await readerHead(of: id, credential: credential, snapshot: false)
        try await checkAvailable(id, after: after)
        let page = try await store.eventPage(of: id, after: after, limit: Int(limit), maxBytes: pageBytes)
        let next = page.hasMore ? page.events.last.map { String($0.seq) } ?? "null" : "null"
        return rawJSON("{\"events\":[" + page.events.map(\.json).joined(separator: ",") + "],\"next\":\(next)}")
    }

    private func replay(_ request: Request) async throws -> Response {
        let id = routes.sessionID(request)
        let credential = try await routes.requireCredential(request)
        let head = try await readerHead(of: id, credential: credential, snapshot: false)
        let explain = try routes.booleanQuery(request, "explain")
        var at = head.version
        if let text = request.query["at"] {
            guard let value = Int64(text), value >= 1 else {
                throw APIError(.unprocessable, "at must be an event seq of at least 1")
            }
            guard value <= head.version else {
                throw APIError(.notFound, "session \(id.rawValue) has events 1 to \(head.version), not \(value)")
            }
            at = value
        }
        // The state right after the compacted seq is still a snapshot: it replays, earlier ones do not.
        try await checkAvailable(id, after: at)
        var session = try await SessionReplay.resource(
            of: id, at: at, in: store, explainingWithin: explain ? routes.limits : nil)
        session.origin = head.origin
        return .json(session.json, headers: ["ETag": "\"\(at)\""])
    }

    // MARK: - Every session (admin)

    private func allEvents(_ request: Request) async throws -> Response {
        if request.query["ticket"] == nil, case .none = routes.credential(request) {
            throw APIError(
                .unauthorized, "send Authorization: Bearer <admin token>", headers: ["WWW-Authenticate": "Bearer"])
        }
        guard try await routes.streamCredential(request).canReadEverySession else {
            throw APIError(
                .forbidden, "the stream of every session needs the admin token (or a ticket or observer token for it)")
        }
        let subscription = try hub.subscribe(to: nil)
        return Response(
            status: .ok, headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-store"]
        ) { writer in
            writer.onClose { subscription.cancel() }
            defer { subscription.cancel() }
            // The hub tags each event with its session for this stream.
            for await item in subscription.items {
                switch item {
                case .keepAlive:
                    try await writer.writeComment("keep-alive")
                case .event(let event, let frame, _):
                    defer { subscription.release(item) }
                    try await writer.write(frame.bytes { event.frame })
                case .resync: continue  // the admin stream is live only: it has no cursor to resume from
                }
            }
        }
    }

    // MARK: - Pieces

    /// The session's reader head; 410 instead of 404 when the session's history was purged
    /// (docs/API.md, Events: "If the events it asks for were purged, the answer is 410").
    func readerHead(of id: SessionID, credential: Credential, snapshot: Bool) async throws -> ReaderHead {
        do {
            return try await service.sessions.readerHead(of: id, credential: credential, snapshot: snapshot)
        } catch let error as SessionError where error.code == .notFound {
            if try await store.wasPurged(id) {
                throw SessionError(.gone, "the events of session \(id.rawValue) were purged")
            }
            throw error
        }
    }

    /// A JSON answer assembled from stored events' JSON text, which is sent as stored.
    private func rawJSON(_ body: String) -> Response {
        .json(text: Array(body.utf8))
    }
}

extension StoredEvent {
    var isSessionEnded: Bool { type == SessionEvent.Kind.sessionEnded.rawValue }
}

extension StoredEvent {
    /// The event as one server-sent event (HTML Living Standard §9.2): `id: <seq>`,
    /// `event: <type>`, and the event's JSON, which is one line, as one `data:` line.
    var frame: [UInt8] {
        ResponseWriter.eventFrame(id: String(seq), event: type, data: json)
    }
}

/// A parked stream's writer: the hub writes the next event's shared frame to it, unless the
/// event ends the session (the stream's task writes that one, then ends the stream).
extension ResponseWriter: LiveEventSink {
    package func writeIfReady(_ event: StoredEvent, _ frame: SharedFrame) -> Bool {
        guard !event.isSessionEnded else { return false }
        return writeIfReady(frame.bytes { event.frame })
    }
}

extension ResponseWriter {
    /// Writes one stored event as a server-sent event.
    func writeEvent(_ event: StoredEvent) async throws {
        try await write(event.frame)
    }
}
