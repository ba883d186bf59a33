import Foundation
import NavigationValues
import NavigationValuesCrypto
import NavigationValuesStore
import NavigationValuesWire

// Read-only credentials: observer tokens (stored as hashes, revocable) and stream tickets
// (signed, short-lived, never stored). Who may do what:
//
// | action                                  | admin | the session's token | read-only credential |
// |-----------------------------------------|-------|---------------------|----------------------|
// | observer token for one session          | yes   | yes                 | no (403)             |
// | observer token for every session        | yes   | no (403)            | no (403)             |
// | list, show, revoke observer tokens      | yes   | its session's       | no (403)             |
// | stream ticket for one session           | yes   | yes                 | if it covers it      |
// | stream ticket for every session         | yes   | no (403)            | if it covers every   |

/// Read-only credentials of a server's sessions: resolving observer tokens and stream tickets into
/// what they may read, issuing tickets, and issuing, listing and revoking observer tokens.
package struct SessionAccess: Sendable {
    let environment: ServiceEnvironment
    /// Where a credential is checked against the session it names.
    let sessions: SessionRegistry

    private var now: Date { environment.now() }
    private var store: any SessionStore { environment.store }
    private var configuration: ServiceConfiguration { environment.configuration }

    // MARK: - Resolving credentials

    /// The credential a bearer token stands for: an observer token becomes a read-only
    /// credential (its scope read from the store), a device token the session a hand-off gave
    /// it; anything else is returned unchanged.
    ///
    /// - Throws: `SessionError(.unauthorized)` for an observer token that is unknown, revoked or
    ///   expired, or a device token that is unknown (or whose session was purged).
    package func resolve(_ credential: Credential) async throws -> Credential {
        if case .token(let token) = credential, IdentifierGenerator.isWellFormedDeviceToken(token) {
            guard let session = try await store.deviceTokenSession(tokenHash: TokenHasher.hash(token)) else {
                throw SessionError(.unauthorized, "unknown device token (its session may have been purged)")
            }
            return .device(session)
        }
        guard case .token(let token) = credential, IdentifierGenerator.isWellFormedObserverToken(token) else {
            return credential
        }
        guard let record = try await store.observer(tokenHash: TokenHasher.hash(token)), isLive(record) else {
            throw SessionError(.unauthorized, "unknown, revoked or expired observer token")
        }
        return .reader(
            ReadGrant(
                scope: record.session.map { .session($0) } ?? .everySession, source: .observer(record.id),
                expiresAt: record.expiresAt))
    }

    /// The read-only credential a stream ticket stands for. A ticket issued to an observer token
    /// stops working when that token is revoked or expires.
    ///
    /// - Throws: `SessionError(.unauthorized)` for a ticket that is damaged, forged or expired.
    package func credential(forTicket ticket: String) async throws -> Credential {
        let contents = try environment.tickets.verify(ticket, now: now)
        if let observer = contents.observer {
            guard let record = try await store.observer(id: observer), isLive(record) else {
                throw SessionError(.unauthorized, "the observer token this stream ticket was issued to was revoked")
            }
        }
        return .reader(
            ReadGrant(
                scope: contents.scope, source: .ticket(observer: contents.observer), expiresAt: contents.expiresAt))
    }

    private func isLive(_ record: ObserverRecord) -> Bool {
        record.expiresAt.map { now < $0 } ?? true
    }

    // MARK: - Stream tickets

    /// A stream ticket for the events of `session`, or of every session when it is nil.
    ///
    /// - Throws: `SessionError`: `.unauthorized` without a credential, `.forbidden` for one that
    ///   does not cover what is asked, `.notFound` for an unknown session.
    package func issueTicket(for session: SessionID?, credential: Credential) async throws -> StreamTicket {
        var observer: ObserverID?
        var expiresAt = now.addingTimeInterval(configuration.ticketLifetime.timeInterval)
        if case .reader(let grant) = credential {
            guard case .observer(let id) = grant.source else {
                throw SessionError(.forbidden, "a stream ticket cannot be exchanged for another one")
            }
            observer = id
            if let end = grant.expiresAt { expiresAt = min(expiresAt, end) }
        }
        if let session {
            _ = try await sessions.readerHead(of: session, credential: credential, snapshot: false)
        } else {
            try requireEverySession(credential, "a stream ticket for every session")
        }
        let scope: ReadGrant.Scope = session.map { .session($0) } ?? .everySession
        return StreamTicket(
            ticket: environment.tickets.ticket(for: scope, observer: observer, expiresAt: expiresAt),
            session: session, expiresAt: expiresAt)
    }

    // MARK: - Observer tokens

    /// Issues a read-only token for `session` (admin or the session's token), or for every
    /// session when it is nil (admin only), named `label`, that expires after `lifetime` (nil:
    /// when revoked).
    ///
    /// - Throws: `SessionError`: `.invalid` past `maxObserversPerScope`; `.forbidden` for a
    ///   credential that may not issue it; `.notFound` for an unknown session.
    package func createObserver(
        for session: SessionID?, label: String, lifetime: Duration?, credential: Credential,
        idempotency: Idempotency<CreatedObserver>? = nil
    ) async throws -> ObserverOutcome {
        try await requireOwner(of: session, credential, "issuing observer tokens")
        if let idempotency,
            let answer = try await store.idempotentAnswer(scope: idempotency.scope, key: idempotency.key)
        {
            return .replayed(answer)
        }
        let token = environment.identifiers.observerToken()
        let createdAt = Timestamp.truncated(now)
        let record = ObserverRecord(
            id: environment.identifiers.observerID(), session: session, tokenHash: TokenHasher.hash(token),
            label: label, createdAt: createdAt,
            expiresAt: lifetime.map { Timestamp.truncated(createdAt.addingTimeInterval($0.timeInterval)) })
        let created = CreatedObserver(observer: ObserverResource(record), token: token)
        let limit = configuration.maxObserversPerScope
        let inserted: Bool
        do {
            inserted = try await store.insertObserver(
                record, limit: limit, now: now,
                idempotency: try idempotency.map { idempotency throws(CryptoError) in
                    // The answer carries the token: it is kept sealed under the client's key.
                    try idempotency.record(created).record(
                        scope: idempotency.scope, key: idempotency.key, session: session, at: createdAt, isSecret: true,
                        identifiers: environment.identifiers)
                })
        } catch let error as StoreError where error.code == .invalidData {
            // The session was purged between the check and the insert.
            throw SessionError(.notFound, "no session \(session?.rawValue ?? "")")
        } catch let error as StoreError where error.code == .conflict {
            // A concurrent request with the same idempotency key won: answer what it answered.
            if let idempotency,
                let answer = try await store.idempotentAnswer(scope: idempotency.scope, key: idempotency.key)
            {
                return .replayed(answer)
            }
            throw error
        }
        guard inserted else {
            let scope = session.map { "session \($0.rawValue)" } ?? "every session"
            throw SessionError(
                .invalid, "\(scope) already has \(limit) observer tokens: revoke one first (--max-observers)")
        }
        return .created(created)
    }

    /// A page of the unexpired observer tokens of `session` (admin or its token), or of every
    /// one when it is nil (admin only).
    package func observers(
        of session: SessionID?, after cursor: ObserverID?, limit: Int, credential: Credential
    ) async throws -> ObserverList {
        try await requireOwner(of: session, credential, "listing observer tokens")
        let rows = try await store.observers(of: session, after: cursor, limit: limit + 1)
        let page = Array(rows.prefix(limit))
        return ObserverList(
            observers: page.filter(isLive).map(ObserverResource.init),
            nextCursor: rows.count > limit ? page.last?.id : nil)
    }

    /// One unexpired observer token (admin, or the token of its session).
    package func observer(_ id: ObserverID, credential: Credential) async throws -> ObserverResource {
        ObserverResource(try await ownedObserver(id, credential))
    }

    /// Revokes an observer token (admin, or the token of its session): it stops working at once,
    /// and so do the stream tickets issued to it.
    package func revokeObserver(_ id: ObserverID, credential: Credential) async throws {
        _ = try await ownedObserver(id, credential)
        guard try await store.deleteObserver(id) else { throw SessionError(.notFound, "no observer token \(id)") }
    }

    private func ownedObserver(_ id: ObserverID, _ credential: Credential) async throws -> ObserverRecord {
        if case .none = credential { throw SessionError(.unauthorized, "send Authorization: Bearer <token>") }
        // Authentication before existence: a token no server could have issued is 401 either way.
        if case .token(let token) = credential, !IdentifierGenerator.isWellFormedToken(token),
            !IdentifierGenerator.isWellFormedObserverToken(token)
        {
            throw SessionError(.unauthorized, "invalid token")
        }
        guard let record = try await store.observer(id: id), isLive(record) else {
            throw SessionError(.notFound, "no observer token \(id.rawValue)")
        }
        try await requireOwner(of: record.session, credential, "managing observer tokens")
        return record
    }

    /// Checks that `credential` is the admin token or, for one session, that session's token.
    private func requireOwner(of session: SessionID?, _ credential: Credential, _ what: String) async throws {
        switch credential {
        case .none:
            throw SessionError(.unauthorized, "send Authorization: Bearer <token>")
        case .reader(let grant):
            throw SessionError(.forbidden, "a \(grant.name) is read-only: \(what) needs the admin or a session token")
        case .token where session == nil, .device where session == nil:
            throw SessionError(.forbidden, "\(what) for every session needs the admin token")
        case .admin, .token, .device:
            if let session { _ = try await sessions.readerHead(of: session, credential: credential, snapshot: false) }
        }
    }

    /// Checks that `credential` may read every session.
    private func requireEverySession(_ credential: Credential, _ what: String) throws(SessionError) {
        if case .none = credential { throw SessionError(.unauthorized, "send Authorization: Bearer <token>") }
        guard credential.canReadEverySession else {
            throw SessionError(.forbidden, "\(what) needs the admin token or an observer token for every session")
        }
    }
}

/// What issuing an observer token answers: the new token, or the first answer again for a
/// retried idempotency key.
package enum ObserverOutcome: Sendable {
    case created(CreatedObserver)
    case replayed(StoredAnswer)
}

extension ObserverResource {
    init(_ record: ObserverRecord) {
        self.init(
            id: record.id, session: record.session, label: record.label, createdAt: record.createdAt,
            expiresAt: record.expiresAt)
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
