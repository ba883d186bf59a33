import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// Copies of recorded histories: import (an exported history as a new session), fork (a new
/// session that starts as another was at revision N), and the pages of history an export writes.
/// Import and fork copy a recorded history through `HistoryCopier` and commit the whole copy in one
/// transaction: a crash leaves all of it or none.
package struct SessionCopies: Sendable {
    let environment: ServiceEnvironment
    /// Where a fork's credential is checked against the session it copies.
    let sessions: SessionRegistry

    private var store: any SessionStore { environment.store }
    private var configuration: ServiceConfiguration { environment.configuration }

    /// The events of session `id` from 1 through `version`, a page at a time, each page bounded by
    /// count (1,000) and by bytes (`maxBytes`, one event at least) as every read of history is,
    /// so a long history is never held whole: what an export writes, and what a fork copies. The
    /// pages end early when the store has no more of them.
    package func pages(of id: SessionID, through version: Int64, maxBytes: Int) -> HistoryPages {
        HistoryPages(store: store, session: id, version: version, maxBytes: maxBytes)
    }
    /// Imports an exported history: NDJSON, one event per line as `GET …/export` writes it,
    /// from `session.created` on. The new session replays exactly as the recorded one did, under
    /// new ids (session, screens, token) and the recorded times.
    ///
    /// - Throws: `SessionError(.invalid)` naming the line (pointer `/<line index>…`) that does not
    ///   decode, does not fit the limits, or does not replay as recorded.
    package func importSession(ndjson body: [UInt8], idempotency: Idempotency<CreatedSession>?) async throws
        -> CreateOutcome
    {
        if let replayed = try await replayedAnswer(idempotency) { return replayed }
        let environment = environment
        let copy = try await Task.detached { () throws -> Copy in
            var copier = HistoryCopier(environment: environment, origin: nil)
            var index = 0
            for line in body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                let text = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
                guard text.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { continue }
                try copier.append(try Self.decodeLine(text, index: index, limits: environment.configuration.limits))
                index += 1
            }
            try copier.checkSession()
            guard let copy = Copy(copier) else {
                throw SessionError(.invalid, "the body holds no event: send the lines of an export", pointer: "")
            }
            return copy
        }.valueMappingFailures { failure in
            SessionError(
                .invalid, "line \(failure.index + 1): \(failure.reason)",
                pointer: "/\(failure.index)\(failure.pointer)")
        }
        return try await commit(copy, idempotency: idempotency)
    }

    /// Forks a session: a new session whose history is a copy of the first `at` events of `id`
    /// (default: all of them), so that it starts as `id` was at revision `at`, then goes its own
    /// way. Its resource links back with `"origin": {"session", "version"}`. Any credential
    /// that reads `id` may fork it.
    ///
    /// - Throws: `SessionError`: as a read of `id`; `.invalid` for an `at` outside 1…version or
    ///   past `maxCopiedEvents`; `.gone` when the events it needs were purged.
    package func fork(
        _ id: SessionID, at: Int64?, credential: Credential, idempotency: Idempotency<CreatedSession>?
    ) async throws -> CreateOutcome {
        let head = try await sessions.readerHead(of: id, credential: credential, snapshot: false)
        if let replayed = try await replayedAnswer(idempotency) { return replayed }
        let target = at ?? head.version
        guard target >= 1, target <= head.version else {
            throw SessionError(
                .invalid, "session \(id.rawValue) has events 1 to \(head.version), not \(target)", pointer: "/at")
        }
        let limit = configuration.maxCopiedEvents
        guard target <= Int64(limit) else {
            throw SessionError(
                .invalid, "a fork copies the first \(target) events; at most \(limit) (--max-copied-events)",
                pointer: "/at")
        }
        let environment = environment
        let pages = pages(of: id, through: target, maxBytes: 1024 * 1024)
        let copy = try await Task.detached { () throws -> Copy in
            var copier = HistoryCopier(environment: environment, origin: SessionOrigin(session: id, version: target))
            var position: Int64 = 0
            func gone() -> SessionError {
                SessionError(.gone, "event \(position + 1) of session \(id.rawValue) is no longer stored")
            }
            for try await page in pages {
                guard page.first?.seq == position + 1 else { throw gone() }
                for stored in page {
                    let recorded: RecordedEvent
                    do {
                        recorded = try RecordedEvent(text: stored.json)
                    } catch {
                        throw CorruptSessionError(session: id, reason: "event \(stored.seq) does not decode: \(error)")
                    }
                    try copier.append(recorded)
                    position = stored.seq
                }
            }
            guard position == target else { throw gone() }
            try copier.checkSession()
            guard let copy = Copy(copier) else { throw SessionError(.gone, "session \(id.rawValue) has no events") }
            return copy
        }.valueMappingFailures { failure in
            SessionError(
                .invalid, "event \(failure.index + 1) of session \(id.rawValue) cannot be copied: \(failure.reason)")
        }
        return try await commit(copy, idempotency: idempotency)
    }

    // MARK: - Pieces

    /// What a copy commits and answers (Sendable: the copied session itself is loaded again from
    /// the store on first use).
    private struct Copy: Sendable {
        var created: CreatedSession
        var mutations: [StoredMutation]
        var last: RecordedEvent

        init?(_ copier: HistoryCopier) {
            guard let (_, created, mutations, last) = copier.finish() else { return nil }
            self.created = created
            self.mutations = mutations
            self.last = last
        }
    }

    private func replayedAnswer(_ idempotency: Idempotency<CreatedSession>?) async throws -> CreateOutcome? {
        guard let idempotency,
            let answer = try await store.idempotentAnswer(scope: idempotency.scope, key: idempotency.key)
        else { return nil }
        return .replayed(answer)
    }

    /// Commits a copy at once and announces it on the stream of every session with its last
    /// event (its seq is the copy's version), not with each copied one.
    private func commit(_ copy: Copy, idempotency: Idempotency<CreatedSession>?) async throws -> CreateOutcome {
        var mutations = copy.mutations
        if let idempotency {
            // The answer carries the new session's token: it is kept sealed under the client's key.
            mutations[0].idempotency = try idempotency.record(copy.created).record(
                scope: idempotency.scope, key: idempotency.key, session: copy.created.session.id,
                at: Timestamp.truncated(environment.now()), isSecret: true, identifiers: environment.identifiers)
        }
        do {
            try await store.commitAll(mutations)
        } catch let error as StoreError where error.code == .conflict {
            // A concurrent request with the same idempotency key won: answer what it answered.
            if let replayed = try await replayedAnswer(idempotency) { return replayed }
            throw error
        }
        if let last = mutations.last { environment.eventCommitted(last.event, copy.last) }
        return .created(copy.created)
    }

    /// One line of an export: an event's JSON.
    private static func decodeLine(_ line: ArraySlice<UInt8>, index: Int, limits: SessionLimits)
        throws(HistoryCopier.Failure) -> RecordedEvent
    {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: line, maxDepth: limits.maxNesting + 8)
        } catch {
            throw HistoryCopier.Failure(index: index, pointer: "", reason: "not JSON: \(error)")
        }
        do {
            return try RecordedEvent(json: json)
        } catch {
            throw HistoryCopier.Failure(index: index, pointer: error.pointer, reason: "not an event: \(error)")
        }
    }
}

extension Task where Failure == any Error {
    /// The task's value, its `HistoryCopier.Failure` turned into the error `map` makes.
    fileprivate func valueMappingFailures(_ map: (HistoryCopier.Failure) -> SessionError) async throws -> Success {
        do {
            return try await value
        } catch let failure as HistoryCopier.Failure {
            throw map(failure)
        }
    }
}

/// The pages of one session's history through a version (`SessionCopies.pages(of:through:maxBytes:)`),
/// each read from the store when it is asked for.
package struct HistoryPages: AsyncSequence, Sendable {
    package typealias Element = [StoredEvent]

    let store: any SessionStore
    let session: SessionID
    let version: Int64
    let maxBytes: Int

    package struct AsyncIterator: AsyncIteratorProtocol {
        let pages: HistoryPages
        var last: Int64 = 0

        package mutating func next() async throws -> [StoredEvent]? {
            guard last < pages.version else { return nil }
            let page = try await pages.store.eventPage(
                of: pages.session, after: last, limit: Int(Swift.min(1_000, pages.version - last)),
                maxBytes: pages.maxBytes
            ).events
            guard let final = page.last else { return nil }
            last = final.seq
            return page
        }
    }

    package func makeAsyncIterator() -> AsyncIterator { AsyncIterator(pages: self) }
}
