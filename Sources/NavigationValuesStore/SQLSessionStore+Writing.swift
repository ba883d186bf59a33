import Foundation
import NavigationValues
import NavigationValuesWire

// MARK: - A mutation as statements

extension SQLSessionStore {
    /// The statements of one commit request. A request of several mutations that creates its
    /// session (an imported or forked session with its copied history) is written as a copy:
    /// its row writes that a later mutation overwrites are left out (``coalescedCopy(_:)``), and
    /// its later mutations are not checked against the session's version, which no other writer
    /// can see before the transaction commits.
    ///
    /// With `isLogFirst` (``writesBehind(_:)``), each mutation writes its event and idempotency
    /// record only, checked against the version its log reaches; its state is written behind.
    ///
    /// `known` holds log versions this process's own commits reached (``LogVersions``): a
    /// log-first mutation made from the one known for its session is not checked again in SQL.
    func plan(_ mutations: [StoredMutation], isLogFirst: Bool = false) throws -> PlannedWrite {
        var known = LogVersions()
        return try plan(mutations, isLogFirst: isLogFirst, known: &known)
    }

    func plan(_ mutations: [StoredMutation], isLogFirst: Bool, known: inout LogVersions) throws -> PlannedWrite {
        if isLogFirst {
            // Every mutation's steps into one array, sized once (a version check, an event, and
            // two statements for an idempotency record at most).
            var steps: [WriteStep] = []
            steps.reserveCapacity(4 * mutations.count)
            for mutation in mutations { try appendLogSteps(for: mutation, to: &steps, known: &known) }
            return PlannedWrite(mutations: mutations, steps: steps)
        }
        let session = mutations.first?.session
        let isCopy = mutations.count > 1 && mutations.first?.createsItsSession == true
        let written = isCopy ? Self.coalescedCopy(mutations) : mutations
        var steps: [WriteStep] = []
        for (index, mutation) in written.enumerated() {
            let isInner = isCopy && index > 0 && mutation.session == session
            steps += try self.steps(for: mutation, checksVersion: !isInner)
        }
        return PlannedWrite(mutations: mutations, steps: steps)
    }

    /// The statements that write one mutation, in order: the version check (unless it creates
    /// its session), its state changes, its event and snapshot (unless it purged its own
    /// session, which keeps nothing), then its idempotency record.
    func steps(for mutation: StoredMutation, checksVersion: Bool = true) throws -> [WriteStep] {
        guard mutation.event.session == mutation.session,
            mutation.snapshot.map({ $0.session == mutation.session }) ?? true
        else {
            throw StoreError(
                code: .invalidData, message: "the event and snapshot must belong to the mutation's session")
        }
        var steps: [WriteStep] = []
        let session = DatabaseValue.text(mutation.session.rawValue)
        if checksVersion, !mutation.createsItsSession {
            // Conditional on the version it was made from: a write of another writer since then
            // makes it a conflict, and the caller reloads.
            let expected = mutation.event.seq - 1
            steps.append(
                WriteStep(text.expectVersion, [session], check: .version(mutation.session, expected: expected)))
        }
        var isPurged = false
        for change in mutation.changes {
            try append(change, to: &steps)
            if case .purgeSession(let id) = change, id == mutation.session { isPurged = true }
        }
        if !isPurged {
            let event = mutation.event
            steps.append(
                WriteStep(
                    text.insertEvent,
                    [
                        session, .integer(event.seq), .text(event.type), .text(event.json), .milliseconds(event.at),
                        .integer(event.json.utf8.count),
                    ]))
            if let snapshot = mutation.snapshot {
                steps.append(WriteStep(text.insertSnapshot, [session, .integer(snapshot.seq), .text(snapshot.json)]))
            }
        }
        if var record = mutation.idempotency {
            // A purge's own record outlives its session, attached to none, until it expires.
            if isPurged, record.session == mutation.session { record.session = nil }
            steps += try idempotencySteps(for: record)
        }
        return steps
    }

    /// Appends the statements of a log-first mutation: the check that the session's log is at
    /// the version it was made from (none when `known` says so, ``LogVersions/take(_:at:)``),
    /// its event, its idempotency record.
    func appendLogSteps(for mutation: StoredMutation, to steps: inout [WriteStep], known: inout LogVersions) throws {
        guard mutation.event.session == mutation.session,
            mutation.snapshot.map({ $0.session == mutation.session }) ?? true
        else {
            throw StoreError(
                code: .invalidData, message: "the event and snapshot must belong to the mutation's session")
        }
        let session = DatabaseValue.text(mutation.session.rawValue)
        let event = mutation.event
        if !known.take(mutation.session, at: event.seq - 1) {
            steps.append(
                WriteStep(
                    text.expectLogVersion, [session], check: .logVersion(mutation.session, expected: event.seq - 1)))
        }
        steps.append(
            WriteStep(
                text.insertEvent,
                [
                    session, .integer(event.seq), .text(event.type), .text(event.json), .milliseconds(event.at),
                    .integer(event.json.utf8.count),
                ]))
        if let record = mutation.idempotency { steps += try idempotencySteps(for: record) }
    }

    /// Keeps the first answer under a key: an unexpired record makes the write a conflict, an
    /// expired one is replaced.
    func idempotencySteps(for record: IdempotencyRecord) throws -> [WriteStep] {
        [
            WriteStep(
                text.replaceExpiredIdempotencyRecord,
                [.text(record.scope), .text(record.key), .milliseconds(idempotencyCutoff)]),
            WriteStep(
                text.insertIdempotencyRecord,
                [
                    .text(record.scope), .text(record.key), .integer(record.status),
                    .text(try Self.jsonText(record.headers)), .blob(record.body), .milliseconds(record.createdAt),
                    .text(record.session?.rawValue),
                ]),
        ]
    }

    func append(_ change: StateChange, to steps: inout [WriteStep]) throws {
        switch change {
        case .insertSession(let session):
            steps.append(
                WriteStep(
                    text.insertSession,
                    [
                        .text(session.id.rawValue), .integer(session.version), .text(session.state.rawValue),
                        .text(session.schemaJSON), .text(session.tokenHash), .milliseconds(session.createdAt),
                        .milliseconds(session.updatedAt), .text(session.origin?.session.rawValue),
                        session.origin.map { .integer($0.version) } ?? .null,
                    ]))
        case .updateSession(let id, let version, let state, let updatedAt):
            let missing = WriteStep.Check.changesOneRow("session \(id) does not exist")
            if splitsSessionUpdate {
                // State and updated_minute are the keys of retention's index: assigned only when
                // one of them changes (Migrations/0008).
                steps.append(
                    WriteStep(
                        text.updateSession, [.integer(version), .milliseconds(updatedAt), .text(id.rawValue)],
                        check: missing))
                steps.append(WriteStep(text.updateSessionIndexKeys, [.text(state.rawValue), .text(id.rawValue)]))
            } else {
                steps.append(
                    WriteStep(
                        text.updateSession,
                        [.integer(version), .milliseconds(updatedAt), .text(state.rawValue), .text(id.rawValue)],
                        check: missing))
            }
        case .insertScreen(let screen):
            steps.append(
                WriteStep(
                    text.insertScreen,
                    [
                        .text(screen.id.rawValue), .text(screen.session.rawValue), .text(screen.stack.rawValue),
                        .integer(screen.index), .text(screen.name), .text(screen.role),
                        .text(screen.previous?.rawValue),
                    ]))
        case .deleteScreens(let ids):
            if ids.count == 1, let id = ids.first {
                // The common pop of one screen: a lookup by key, no list.
                steps.append(WriteStep(text.deleteScreen, [.text(id.rawValue)]))
            } else {
                // One statement, so links between the deleted screens are checked once, at its end.
                steps.append(WriteStep(text.deleteScreens, [driver.dialect.list(ids.map(\.rawValue))]))
            }
        case .setValue(let screen, let key, let json):
            steps.append(WriteStep(text.setValue, [.text(screen.rawValue), .text(key), .text(json)]))
        case .removeValue(let screen, let key):
            steps.append(WriteStep(text.removeValue, [.text(screen.rawValue), .text(key)]))
        case .setHandler(let screen, let key, let passBack):
            steps.append(WriteStep(text.setHandler, [.text(screen.rawValue), .text(key), .bool(passBack)]))
        case .removeHandler(let screen, let key):
            steps.append(WriteStep(text.removeHandler, [.text(screen.rawValue), .text(key)]))
        case .rememberDelivery(let screen, let key, let valueJSON, let passedJSON):
            steps.append(
                WriteStep(
                    text.rememberDelivery, [.text(valueJSON), .text(passedJSON), .text(screen.rawValue), .text(key)],
                    check: .changesOneRow("screen \(screen) has no handler for \(key)")))
        case .setReceivedPreference(let screen, let key, let json):
            steps.append(WriteStep(text.setReceivedPreference, [.text(screen.rawValue), .text(key), .text(json)]))
        case .purgeSession(let id):
            // Screens, their rows, events, snapshots and idempotency records follow by ON DELETE
            // CASCADE; a tombstone remembers that the session was purged.
            steps.append(WriteStep(text.deleteSession, [.text(id.rawValue)]))
            steps.append(WriteStep(text.insertTombstone, [.text(id.rawValue), .milliseconds(options.now())]))
        case .insertStack(let stack):
            steps.append(
                WriteStep(
                    text.insertStack,
                    [
                        .text(stack.session.rawValue), .text(stack.id.rawValue), .integer(stack.position),
                        .text(stack.kind.rawValue), .text(stack.presenter?.rawValue),
                    ]))
        case .deleteStacks(let session, let ids):
            steps.append(
                WriteStep(text.deleteStacks, [.text(session.rawValue), driver.dialect.list(ids.map(\.rawValue))]))
        case .selectStack(let session, let stack):
            steps.append(
                WriteStep(
                    text.selectStack, [.text(stack.rawValue), .text(session.rawValue)],
                    check: .changesOneRow("session \(session) does not exist")))
        case .setStackPosition(let session, let stack, let position):
            steps.append(
                WriteStep(
                    text.setStackPosition, [.integer(position), .text(session.rawValue), .text(stack.rawValue)]))
        }
    }

    /// A new session's copied history with the row writes that a later one overwrites left out:
    /// the session row's version and selected stack (only the last of each stays), and a value,
    /// a handler's memory or a received preference written again later for the same screen and
    /// key. Each would otherwise update one row many times in one transaction (on PostgreSQL, a
    /// chain of row versions that each later update walks: quadratic, 34 s for 20,000 events on
    /// the CI machine). Events and snapshots stay as they are.
    package static func coalescedCopy(_ mutations: [StoredMutation]) -> [StoredMutation] {
        guard let session = mutations.first?.session else { return mutations }
        var later: Set<CopiedRow> = []
        var isSessionWritten = false
        var isStackSelected = false
        var result = mutations
        for index in result.indices.reversed() {
            var kept: [StateChange] = []
            for change in result[index].changes.reversed() {
                let written: CopiedRow?
                switch change {
                case .updateSession(let id, _, _, _) where id == session:
                    if isSessionWritten { continue }
                    isSessionWritten = true
                    written = nil
                case .selectStack(let id, _) where id == session:
                    if isStackSelected { continue }
                    isStackSelected = true
                    written = nil
                default: written = CopiedRow(change)
                }
                if let written {
                    if later.contains(written) { continue }
                    later.insert(written)
                }
                kept.append(change)
            }
            result[index].changes = kept.reversed()
        }
        return result
    }

    static func jsonText(_ dictionary: [String: String]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(dictionary), as: UTF8.self)
        } catch {
            throw StoreError(code: .invalidData, message: "cannot encode headers as JSON: \(error)")
        }
    }
}

/// The version each session's event log reached at this process's latest log-first commit of
/// it, where this process is its file's only writer (SQLite): a log-first mutation made from
/// that version needs no read of the log to check it (a `max(seq)` over the session's events,
/// about a tenth of the writer's time per mutation). Only what a commit proved is kept: an entry
/// is taken out when a batch plans a mutation on it, and put back with the version the mutation
/// reached only once its transaction committed, so a failed or rolled-back write, a second
/// writer of the session in the same batch, a purge or a write that is not log-first leaves the
/// session unknown, and its next mutation is checked in SQL as before. A session unknown here
/// (after a restart, or once the table was cleared at its bound) is always checked in SQL.
struct LogVersions: Sendable {
    /// The most sessions kept; past it the table starts again empty (each session then costs
    /// one check in SQL to be known again).
    static let bound = 100_000
    private var versions: [SessionID: Int64] = [:]

    /// Whether the log of `session` is known to be at `version`; the session is unknown after
    /// this, until ``record(_:isCommitted:)`` says what its commit reached.
    mutating func take(_ session: SessionID, at version: Int64) -> Bool {
        versions.removeValue(forKey: session) == version
    }

    /// After a batch: what the committed log-first mutations of one request reached; with
    /// `isCommitted` false (a failure, or a write that is not log-first), their sessions and
    /// those they purge are unknown.
    mutating func record(_ mutations: [StoredMutation], isCommitted: Bool) {
        for mutation in mutations {
            if isCommitted {
                versions[mutation.session] = mutation.event.seq
            } else {
                versions[mutation.session] = nil
                for case .purgeSession(let id) in mutation.changes { versions[id] = nil }
            }
        }
        if versions.count > Self.bound { versions = [:] }
    }

    /// The table, leaving an empty one in its place (the writer works on its own copy while it
    /// plans and runs a batch).
    mutating func take() -> LogVersions {
        var taken = LogVersions()
        swap(&taken, &self)
        return taken
    }
}

/// A row a change writes, by screen and key, which a later write of the same row replaces
/// (``SQLSessionStore/coalescedCopy(_:)``, ``SQLSessionStore/coalescedState(_:of:)``).
enum CopiedRow: Hashable {
    case value(ScreenID, String)
    case memory(ScreenID, String)
    case received(ScreenID, String)

    /// The row `change` writes; nil for a change that is not such a write.
    init?(_ change: StateChange) {
        switch change {
        case .setValue(let screen, let key, _): self = .value(screen, key)
        case .rememberDelivery(let screen, let key, _, _): self = .memory(screen, key)
        case .setReceivedPreference(let screen, let key, _): self = .received(screen, key)
        default: return nil
        }
    }
}
