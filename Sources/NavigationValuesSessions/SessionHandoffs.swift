import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// Hand-offs: "continue on my other device". The holder of a session's token makes a code
/// (``create(for:fork:credential:)``); another device redeems it (``redeem(_:)``) for a device
/// token of its own onto the same session, or, for a hand-off made with `fork`, for a new session
/// that starts as this one was when the code was made.
///
/// A code is signed (``HandoffCodeSigner``): a damaged or forged one, and an expired one, are
/// refused before any database work. Its record in the store makes it single-use across every
/// instance sharing the database: redeeming sets its `used_at` in one conditional update.
///
/// ```swift
/// let made = try await service.handoffs.create(for: id, fork: false, credential: .token(token))
/// let joined = try await service.handoffs.redeem(made.code)   // the session, with a device token
/// ```
package struct SessionHandoffs: Sendable {
    let environment: ServiceEnvironment
    let sessions: SessionRegistry
    let copies: SessionCopies

    private var store: any SessionStore { environment.store }
    private var configuration: ServiceConfiguration { environment.configuration }

    /// What redeeming answers: the session joined (with a new device token), or the fork made.
    package enum Redeemed: Sendable {
        case joined(CreatedSession)
        case forked(CreateOutcome)
    }

    /// Makes a hand-off of session `id`: admin, the session's token or a device token of it.
    ///
    /// - Throws: `SessionError`: as a read of the session; `.forbidden` for a read-only
    ///   credential; `.gone` for an ended session; `.tooManyHandoffs` past
    ///   `maxHandoffsPerSession` unused ones.
    package func create(for id: SessionID, fork: Bool, credential: Credential) async throws -> CreatedHandoff {
        if case .reader(let grant) = credential {
            throw SessionError(.forbidden, "a \(grant.name) is read-only: a hand-off needs the session's token")
        }
        let head = try await sessions.readerHead(of: id, credential: credential, snapshot: false)
        guard !head.isEnded else {
            throw SessionError(.gone, "session \(id.rawValue) has ended: there is nothing to continue")
        }
        let now = environment.now()
        let idBytes = environment.identifiers.randomBytes(HandoffCodeSigner.idBytes)
        let expiresAt = HandoffCodeSigner.carriedExpiry(
            now.addingTimeInterval(configuration.handoffLifetime.timeInterval))
        let record = HandoffRecord(
            id: Base64URL.encode(idBytes), session: id, fork: fork, version: head.version,
            createdAt: Timestamp.truncated(now), expiresAt: expiresAt)
        let limit = configuration.maxHandoffsPerSession
        let inserted: Bool
        do {
            inserted = try await store.insertHandoff(record, limit: limit, now: now)
        } catch let error as StoreError where error.code == .invalidData {
            // The session was purged between the check and the insert.
            throw SessionError(.notFound, "no session \(id.rawValue)")
        }
        guard inserted else {
            var error = SessionError(
                .tooManyHandoffs,
                "session \(id.rawValue) already has \(limit) unused hand-offs: redeem one or let it expire (--max-handoffs)"
            )
            error.limit = "max-handoffs"
            // Every code standing in the way expires within the lifetime of a code (its expiry is
            // carried rounded down): by then, at the latest, there is room again. When the oldest
            // of them expires would take another query on a path that has just been refused.
            error.retryAfterSeconds = Int(configuration.handoffLifetime.timeInterval.rounded(.up))
            throw error
        }
        return CreatedHandoff(
            code: environment.handoffCodes.code(id: idBytes, expiresAt: expiresAt), session: id, fork: fork,
            version: head.version, expiresAt: expiresAt)
    }

    /// Redeems a code: once, before it expires, while its session lasts.
    ///
    /// - Throws: `SessionError`: `.handoffInvalid` (damaged or forged), `.handoffExpired`,
    ///   `.handoffUnknown` (genuine but unrecorded), `.handoffUsed`, `.handoffSessionEnded`,
    ///   `.handoffSessionPurged`, `.tooManyDevices`; for a fork, as a fork of the session at the
    ///   hand-off's version (the code is used by then).
    package func redeem(_ code: String) async throws -> Redeemed {
        let contents = try environment.handoffCodes.verify(code)
        let now = environment.now()
        guard now < contents.expiresAt else {
            throw SessionError(
                .handoffExpired,
                "this hand-off code expired at \(Timestamp.string(from: contents.expiresAt)): make a new one")
        }
        guard let record = try await store.handoff(id: contents.id) else {
            throw SessionError(.handoffUnknown, "no hand-off has this code (it may be from another server)")
        }
        guard record.usedAt == nil else { throw used() }
        let head: ReaderHead
        do {
            head = try await sessions.readerHead(of: record.session, credential: .admin, snapshot: !record.fork)
        } catch let error as SessionError where error.code == .notFound || error.code == .gone {
            throw SessionError(
                .handoffSessionPurged, "session \(record.session.rawValue) was purged since this code was made")
        }
        guard !head.isEnded else {
            throw SessionError(
                .handoffSessionEnded, "session \(record.session.rawValue) has ended since this code was made")
        }
        if record.fork {
            guard try await store.consumeHandoff(record.id, at: now, device: nil, maxDevices: 0) == .consumed else {
                throw used()
            }
            return .forked(
                try await copies.fork(record.session, at: record.version, credential: .admin, idempotency: nil))
        }
        guard let session = head.snapshot else {
            throw SessionError(.notFound, "no session \(record.session.rawValue)")
        }
        let token = environment.identifiers.deviceToken()
        let device = DeviceTokenRecord(
            tokenHash: TokenHasher.hash(token), session: record.session, handoff: record.id,
            createdAt: Timestamp.truncated(now))
        let limit = configuration.maxDevicesPerSession
        switch try await store.consumeHandoff(record.id, at: now, device: device, maxDevices: limit) {
        case .consumed:
            return .joined(CreatedSession(session: session, token: token))
        case .notAvailable:
            throw used()
        case .tooManyDevices:
            var error = SessionError(
                .tooManyDevices,
                "session \(record.session.rawValue) already has \(limit) devices joined by hand-offs (--max-devices)")
            error.limit = "max-devices"
            throw error
        }
    }

    private func used() -> SessionError {
        SessionError(.handoffUsed, "this hand-off code was already redeemed: codes work once; make a new one")
    }
}
