import Dispatch
import Foundation
import NavigationValues
import NavigationValuesWire
import Synchronization

// MARK: - Log-first commits: the state written behind

// With ``WriteBehind`` on, a mutation of an existing session commits its event (and its
// idempotency record) and nothing else; the writer keeps its state changes in memory, by session,
// and writes them later, a session's changes coalesced, in a transaction of their own (at most
// `maximumEvents` events or `maximumDelay` after the first of them). Each session's write is
// conditional on the state's version being the one its changes start from, so the state never
// goes back nor skips a version. A session read sees its state brought up to its log: the changes
// this process holds are written first, and events past the state with no changes held here (the
// process was killed before it wrote them) are replayed (``StateReplayer``) and written then.

extension SQLSessionStore {
    /// Whether a commit request writes its event only: mutations of existing sessions. A
    /// request that creates or purges a session writes everything in its own transaction.
    func writesBehind(_ mutations: [StoredMutation]) -> Bool {
        options.writeBehind.isOn
            && mutations.allSatisfy { mutation in
                !mutation.changes.contains { change in
                    switch change {
                    case .insertSession, .purgeSession: true
                    default: false
                    }
                }
            }
    }

    /// After a batch committed (on the writer's queue, before its callers resume): the state
    /// changes of its log-first requests wait; a purge forgets its session's.
    func recordCommitted(_ requests: [(mutations: [StoredMutation], isLogFirst: Bool)]) {
        guard options.writeBehind.isOn, !requests.isEmpty else { return }
        let now = ContinuousClock.now
        let startTimer = behind.withLock { pending -> Bool in
            for request in requests {
                for mutation in request.mutations {
                    if request.isLogFirst {
                        pending.record(mutation, at: now)
                    } else {
                        for case .purgeSession(let id) in mutation.changes { pending.forget(id) }
                    }
                }
            }
            guard !options.writeBehind.isHeldForTests, pending.eventCount > 0, !pending.isTimerSet else { return false }
            pending.isTimerSet = true
            return true
        }
        if startTimer {
            let delay = options.writeBehind.maximumDelay
            DispatchQueue.global().asyncAfter(deadline: .now() + delay.seconds) { [self] in
                driver.enqueueOnWriter {
                    self.behind.withLock { $0.isTimerSet = false }
                    self.startWritingStateBehind()
                }
            }
        }
    }

    /// Between batches: starts writing the waiting state once it passes
    /// ``WriteBehind/maximumEvents``; past twice that (writes behind cannot keep up with the
    /// commits), writes it down to the bound before the next batch, so that memory stays bounded.
    func writeStateBehindIfDue() {
        guard options.writeBehind.isOn, !options.writeBehind.isHeldForTests else { return }
        let count = behind.withLock { $0.eventCount }
        guard count >= options.writeBehind.maximumEvents else { return }
        if count >= 2 * options.writeBehind.maximumEvents {
            let cutoff = ContinuousClock.now
            while behind.withLock({ $0.eventCount >= options.writeBehind.maximumEvents }),
                writeStateBehindPart(waitingSince: cutoff)
            {}
        }
        startWritingStateBehind()
    }

    /// On the writer's queue: writes the state waiting now, one part
    /// (``WriteBehind/maximumSessionsPerWrite`` sessions) at a time, each part queued behind
    /// what waits on the writer meanwhile, so that the group commit's batches run between two
    /// parts and a commit never waits for more than one part. What is committed after the start
    /// waits for the next round (the timer, or the event bound). One round at a time.
    func startWritingStateBehind() {
        let start = behind.withLock { pending -> Bool in
            guard !pending.isWriting, pending.eventCount > 0 else { return false }
            pending.isWriting = true
            return true
        }
        if start { continueWritingStateBehind(waitingSince: .now) }
    }

    private func continueWritingStateBehind(waitingSince cutoff: ContinuousClock.Instant) {
        if writeStateBehindPart(waitingSince: cutoff) {
            driver.enqueueOnWriter { self.continueWritingStateBehind(waitingSince: cutoff) }
        } else {
            behind.withLock { $0.isWriting = false }
        }
    }

    /// Writes every waiting change, part after part, without letting batches in between (tests,
    /// and what must see every state written at once); on the writer's queue.
    func writeStateBehind() {
        let cutoff = ContinuousClock.now
        while writeStateBehindPart(waitingSince: cutoff) {}
    }

    /// Writes the waiting state of `only` one session, one transaction; on the writer's queue.
    func writeStateBehind(only id: SessionID) {
        write(behind.withLock { $0.take(only: id) })
    }

    /// Writes one part of the state waiting since `cutoff` or earlier: at most
    /// ``WriteBehind/maximumSessionsPerWrite`` sessions, those that waited longest, in one
    /// transaction; on the writer's queue. Returns whether more of it waits.
    @discardableResult
    func writeStateBehindPart(waitingSince cutoff: ContinuousClock.Instant) -> Bool {
        let (taken, more) = behind.withLock {
            $0.take(waitingSince: cutoff, maximum: options.writeBehind.maximumSessionsPerWrite)
        }
        write(taken)
        return more
    }

    /// Writes the waiting state of `taken`, one transaction. A session whose write fails (its
    /// state was not at the version its changes start from) is brought up to its log by
    /// replaying it instead.
    private func write(_ taken: [(session: SessionID, state: PendingState)]) {
        guard !taken.isEmpty else { return }
        let cpuStart = threadCPUSeconds()
        var writes: [PlannedWrite] = []
        var planned: [SessionID] = []
        var failed: [SessionID] = []
        for (session, state) in taken {
            if let write = stateWrite(of: session, state) {
                writes.append(unsynced(write))
                planned.append(session)
            } else {
                failed.append(session)
            }
        }
        if !writes.isEmpty {
            for (session, result) in zip(planned, driver.commitBatch(writes, cleanup: nil)) {
                if case .failure = result { failed.append(session) }
            }
        }
        // The snapshots taken with a write that failed are still true of the log (each was made
        // from the session at its event, which is committed), and the catch-up below makes none:
        // written on their own, so that later loads still start their replay from the newest.
        // A session purged since refuses them (its rows are gone); one already there is kept.
        if !failed.isEmpty {
            let failedSessions = Set(failed)
            let snapshotWrites = taken.filter { failedSessions.contains($0.session) && !$0.state.snapshots.isEmpty }
                .map { session, state in
                    unsynced(
                        PlannedWrite(
                            mutations: [],
                            steps: state.snapshots.map { snapshot in
                                WriteStep(
                                    text.insertSnapshotUnlessPresent,
                                    [.text(session.rawValue), .integer(snapshot.seq), .text(snapshot.json)])
                            }))
                }
            if !snapshotWrites.isEmpty { _ = driver.commitBatch(snapshotWrites, cleanup: nil) }
        }
        let spent = threadCPUSeconds() - cpuStart
        figures.withLock { metrics in
            metrics.stateWrites += 1
            metrics.stateWriteSessions += taken.count
            metrics.stateWriteEvents += taken.reduce(0) { $0 + Int($1.state.to - $1.state.from) }
            metrics.stateWriteFailures += failed.count
            metrics.writerCPUSeconds += spent
        }
        for session in failed {
            Task { _ = try? await self.loadSession(session) }
        }
    }

    /// One session's waiting state as statements: first the version, conditional on the state
    /// being where the changes start; then the changes, coalesced (``coalescedState(_:of:)``);
    /// then the snapshots taken meanwhile. Nil when the changes do not say the version they
    /// reach (no ``StateChange/updateSession(_:version:state:updatedAt:)``).
    func stateWrite(of session: SessionID, _ state: PendingState) -> PlannedWrite? {
        var last: (version: Int64, state: SessionState, updatedAt: Date)?
        for case .updateSession(let id, let version, let state, let updatedAt) in state.changes where id == session {
            last = (version, state, updatedAt)
        }
        guard let last, last.version == state.to else { return nil }
        let id = DatabaseValue.text(session.rawValue)
        let behind = "the state of session \(session) is no longer at version \(state.from)"
        var steps: [WriteStep] = []
        steps.reserveCapacity(2 + state.changes.count + state.snapshots.count)
        if splitsSessionUpdate {
            steps.append(
                WriteStep(
                    text.advanceSession,
                    [.integer(last.version), .milliseconds(last.updatedAt), id, .integer(state.from)],
                    check: .changesOneRow(behind)))
            steps.append(WriteStep(text.updateSessionIndexKeys, [.text(last.state.rawValue), id]))
        } else {
            steps.append(
                WriteStep(
                    text.advanceSession,
                    [
                        .integer(last.version), .milliseconds(last.updatedAt), .text(last.state.rawValue), id,
                        .integer(state.from),
                    ],
                    check: .changesOneRow(behind)))
        }
        do {
            for change in Self.coalescedState(state.changes, of: session) {
                if case .updateSession(let other, _, _, _) = change, other == session { continue }
                try append(change, to: &steps)
            }
        } catch {
            return nil
        }
        for snapshot in state.snapshots {
            steps.append(
                WriteStep(text.insertSnapshotUnlessPresent, [id, .integer(snapshot.seq), .text(snapshot.json)]))
        }
        return PlannedWrite(mutations: [], steps: steps)
    }

    /// A session's changes over several events as the fewest row writes that reach the same
    /// state: a row written again later keeps only its last write (``coalescedCopy(_:)``), and a
    /// screen (or stack) added and then removed among them is not written at all, nor is anything
    /// written on it in between. A stack id may be used again (a tab removed and added back): only
    /// an addition followed by a removal cancels out, never a removal followed by an addition.
    ///
    /// The same rule as ``coalescedCopy(_:)`` then the cancellations, kept as a mask over
    /// `changes` (on the stack): what it allocates is the result, where a push then a pop of one
    /// screen, what most sessions wait with, cost about ten allocations (sets and dictionaries of
    /// open screens, arrays of their positions, copies of the changes).
    package static func coalescedState(_ changes: [StateChange], of session: SessionID) -> [StateChange] {
        guard !changes.isEmpty else { return [] }
        let count = changes.count
        return withUnsafeTemporaryAllocation(of: Bool.self, capacity: count) { kept in
            kept.initialize(repeating: true)
            // A row written again later keeps only its last write; so do the session's row and
            // its selected stack.
            var isSessionWritten = false
            var isStackSelected = false
            var later: Set<CopiedRow> = []
            for index in (0..<count).reversed() {
                switch changes[index] {
                case .updateSession(let id, _, _, _) where id == session:
                    if isSessionWritten { kept[index] = false }
                    isSessionWritten = true
                case .selectStack(let id, _) where id == session:
                    if isStackSelected { kept[index] = false }
                    isStackSelected = true
                default:
                    guard let row = CopiedRow(changes[index]) else { continue }
                    // Few changes (the usual case) are compared with those after them; many,
                    // through a set.
                    let isWrittenLater =
                        count <= 32
                        ? (index + 1..<count).contains { kept[$0] && CopiedRow(changes[$0]) == row }
                        : !later.insert(row).inserted
                    if isWrittenLater { kept[index] = false }
                }
            }
            // A screen or stack added and then removed cancels out, with whatever was written on
            // it in between. The ids a removal keeps, when it keeps some but not all (rare).
            var replaced: [Int: StateChange] = [:]
            for index in 0..<count where kept[index] {
                switch changes[index] {
                case .deleteScreens(let ids):
                    let remaining = cancelAdditions(
                        of: ids, removedAt: index, kept: kept, in: changes, replaced: replaced,
                        adds: { change, id in
                            switch change {
                            case .insertScreen(let screen): screen.id == id ? true : nil
                            case .deleteScreens(let removed): removed.contains(id) ? false : nil
                            default: nil
                            }
                        },
                        writesOn: { change, id in screen(writtenBy: change) == id })
                    if let remaining {
                        if remaining.isEmpty { kept[index] = false } else { replaced[index] = .deleteScreens(remaining) }
                    }
                case .deleteStacks(let owner, let ids):
                    let remaining = cancelAdditions(
                        of: ids, removedAt: index, kept: kept, in: changes, replaced: replaced,
                        adds: { change, id in
                            switch change {
                            case .insertStack(let stack): stack.id == id ? true : nil
                            case .deleteStacks(_, let removed): removed.contains(id) ? false : nil
                            default: nil
                            }
                        },
                        writesOn: { change, id in
                            if case .setStackPosition(_, let stack, _) = change { stack == id } else { false }
                        })
                    if let remaining {
                        if remaining.isEmpty { kept[index] = false } else { replaced[index] = .deleteStacks(owner, remaining) }
                    }
                default:
                    break
                }
            }
            var rows: [StateChange] = []
            rows.reserveCapacity(kept.lazy.filter { $0 }.count)
            for index in 0..<count where kept[index] { rows.append(replaced[index] ?? changes[index]) }
            return rows
        }
    }

    /// Cancels each of `ids`, removed by the change at `index`, against its standing addition
    /// before it (``standingAddition(before:kept:in:replaced:adds:)``): the addition and what was
    /// written on the id in between (`writesOn`) are no longer kept. Nil when no id cancels out
    /// (the removal stays as it is); otherwise the ids it still removes.
    private static func cancelAdditions<ID: Equatable>(
        of ids: [ID], removedAt index: Int, kept: UnsafeMutableBufferPointer<Bool>, in changes: [StateChange],
        replaced: [Int: StateChange], adds: (StateChange, ID) -> Bool?, writesOn: (StateChange, ID) -> Bool
    ) -> [ID]? {
        var remaining: [ID]?  // made once an id cancels out
        for (position, id) in ids.enumerated() {
            guard let added = standingAddition(before: index, kept: kept, in: changes, replaced: replaced, adds: { adds($0, id) })
            else {
                remaining?.append(id)
                continue
            }
            if remaining == nil { remaining = Array(ids[..<position]) }
            kept[added] = false
            for between in added + 1..<index where kept[between] && writesOn(changes[between], id) {
                kept[between] = false
            }
        }
        return remaining
    }

    /// Where the screen or stack a removal at `end` removes was added, when that addition still
    /// stands (no kept removal of it since): the latest kept change before `end` that `adds` says
    /// something of, `true` for its addition, `false` for a removal of it.
    private static func standingAddition(
        before end: Int, kept: UnsafeMutableBufferPointer<Bool>, in changes: [StateChange],
        replaced: [Int: StateChange], adds: (StateChange) -> Bool?
    ) -> Int? {
        for index in stride(from: end - 1, through: 0, by: -1) where kept[index] {
            switch adds(replaced[index] ?? changes[index]) {
            case true?: return index
            case false?: return nil
            case nil: continue
            }
        }
        return nil
    }

    /// The screen a change writes on (a value, a handler, a delivery's memory, a preference received).
    private static func screen(writtenBy change: StateChange) -> ScreenID? {
        switch change {
        case .setValue(let screen, _, _), .removeValue(let screen, _), .setHandler(let screen, _, _),
            .removeHandler(let screen, _), .rememberDelivery(let screen, _, _, _),
            .setReceivedPreference(let screen, _, _):
            screen
        default:
            nil
        }
    }

    /// Runs `body` on the writer's queue, between batches.
    func onWriter<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            driver.enqueueOnWriter { continuation.resume(returning: body()) }
        }
    }

    /// Whether a replayer was given (``SessionStore/replayStates(using:)``).
    var replaysStates: Bool { stateReplayer.withLock { $0 != nil } }

    /// Whether this process holds state changes of `id` not yet written.
    func hasWaitingState(_ id: SessionID) -> Bool {
        behind.withLock { $0.sessions[id] != nil }
    }

    /// The state and last change `id`'s waiting changes reach, if any wait.
    func waitingState(of id: SessionID) -> SessionState? {
        behind.withLock { $0.sessions[id]?.state }
    }

    /// Writes every waiting change, then (once after the store opened) brings each session whose
    /// state is behind its log up to it: what reads many sessions' rows at once (the session
    /// list, retention, compaction) then sees them as the log says.
    func settleState() async throws {
        if options.writeBehind.isOn {
            // Part after part, the batches running between them.
            let cutoff = ContinuousClock.now
            while await onWriter({ self.writeStateBehindPart(waitingSince: cutoff) }) {}
        }
        // Without a replayer (a tool reading the file), a session left behind keeps its rows as
        // they are, and its version is still its log's.
        guard mayLagItsLog.withLock({ $0 }), replaysStates else { return }
        let sql = text.laggingSessions
        while true {
            let lagging = try await driver.read { connection in
                try connection.fetchAll(sql, [.integer(100)]) { row in SessionID(try row.string(0)) }
            }
            for id in lagging { _ = try await loadSession(id) }
            if lagging.count < 100 { break }
        }
        mayLagItsLog.withLock { $0 = false }
    }

    /// Brings `session` (read at its state's version) up to `events`, the log after it: replays
    /// them, and writes the changes they make, conditional on the state's version as read.
    func catchUp(_ session: StoredSession, with events: [StoredEvent]) async throws {
        guard let write = try catchUpWrite(session, with: events).map(unsynced) else { return }
        let results = await onWriter { self.driver.commitBatch([write], cleanup: nil) }
        // A failed write (another read caught it up first) leaves the caller to read again.
        _ = results
    }

    /// A state write in a transaction of state writes only, which need not wait for the disk
    /// where the engine lets it: the event log, committed durably first, rebuilds what a crash
    /// loses (never in a turn's transaction, which commits a mutation's event too).
    func unsynced(_ write: PlannedWrite) -> PlannedWrite {
        let first = text.unsyncedCommit.map { [WriteStep($0, [])] } ?? []
        return PlannedWrite(mutations: write.mutations, steps: first + write.steps, isUnsynced: true)
    }

    /// The write that brings `session` (read at its state's version) up to `events`, the log
    /// after it: the changes their replay makes, conditional on the state's version as read.
    /// Nil when there are no events; counted as a catch-up.
    func catchUpWrite(_ session: StoredSession, with events: [StoredEvent]) throws -> PlannedWrite? {
        let id = session.record.id
        guard let last = events.last else { return nil }
        guard let replayer = stateReplayer.withLock({ $0 }) else {
            throw StoreError(
                code: .unavailable,
                message:
                    "the state of session \(id) is behind its log (event \(last.seq)), and this store replays no events"
            )
        }
        let changes = try replayer(session, events)
        let state = PendingState(
            from: session.record.version, to: last.seq, changes: changes, snapshots: [], state: session.record.state,
            since: .now)
        guard let write = stateWrite(of: id, state) else {
            throw StoreError(
                code: .corrupt,
                message: "replaying the events of session \(id) after \(state.from) reaches no version \(last.seq)")
        }
        figures.withLock { metrics in
            metrics.stateCatchUps += 1
            metrics.stateWriteEvents += events.count
        }
        return write
    }
}

/// The state changes of one session's log-first commits, not yet written.
struct PendingState: Sendable {
    /// The version the stored state is at (the first change's event's seq - 1).
    var from: Int64
    /// The version the changes reach.
    var to: Int64
    var changes: [StateChange]
    var snapshots: [StoredSnapshot]
    /// The session's state as of ``to``.
    var state: SessionState
    /// When the first of them was committed.
    var since: ContinuousClock.Instant
}

/// Every session's waiting state changes; guarded by the store's mutex.
struct PendingStates {
    var sessions: [SessionID: PendingState] = [:]
    /// Events whose changes wait, over every session.
    var eventCount = 0
    /// Whether a timer will write them.
    var isTimerSet = false
    /// Whether a round of writes behind is under way (``SQLSessionStore/startWritingStateBehind()``).
    var isWriting = false

    mutating func record(_ mutation: StoredMutation, at now: ContinuousClock.Instant) {
        let seq = mutation.event.seq
        // Taken out while it changes, so that its changes array has one owner and grows in place
        // (a copy left in the dictionary made every append copy the whole array).
        var state = mutation.session == mutation.event.session ? sessions.removeValue(forKey: mutation.session) : nil
        if state == nil || state?.to != seq - 1 {
            // Nothing waits (or what waited does not lead here): the state is taken to be at
            // the version this mutation was made from, which its write checks. Snapshots of what
            // waited are kept: they are true of the log whatever the state's rows say.
            var kept: [StoredSnapshot] = []
            if let dropped = state {
                eventCount -= Int(dropped.to - dropped.from)
                kept = dropped.snapshots.filter { $0.seq < seq }
            }
            state = PendingState(from: seq - 1, to: seq - 1, changes: [], snapshots: kept, state: .active, since: now)
        }
        guard var pending = state else { return }
        state = nil
        pending.to = seq
        pending.changes += mutation.changes
        if let snapshot = mutation.snapshot { pending.snapshots.append(snapshot) }
        for case .updateSession(let id, _, let state, _) in mutation.changes where id == mutation.session {
            pending.state = state
        }
        sessions[mutation.session] = pending
        eventCount += 1
    }

    mutating func forget(_ id: SessionID) {
        guard let dropped = sessions.removeValue(forKey: id) else { return }
        eventCount -= Int(dropped.to - dropped.from)
    }

    mutating func take(only id: SessionID) -> [(session: SessionID, state: PendingState)] {
        guard let state = sessions.removeValue(forKey: id) else { return [] }
        eventCount -= Int(state.to - state.from)
        return [(id, state)]
    }

    /// At most `maximum` sessions whose changes wait since `cutoff` or earlier, those that
    /// waited longest; and whether more such sessions may wait (the last part of a round can
    /// then be empty). The round's order is made once, at its first part (``Round``): each
    /// later part takes the next sessions of it that still wait since `cutoff`, rather than
    /// filtering and sorting every waiting session again.
    mutating func take(
        waitingSince cutoff: ContinuousClock.Instant, maximum: Int
    ) -> (taken: [(session: SessionID, state: PendingState)], more: Bool) {
        if round?.cutoff != cutoff {
            let due = sessions.filter { $0.value.since <= cutoff }.map { ($0.key, $0.value.since) }
            round = Round(cutoff: cutoff, order: due.sorted { $0.1 < $1.1 }.map(\.0))
        }
        guard var current = round else { return ([], false) }
        var taken: [(session: SessionID, state: PendingState)] = []
        taken.reserveCapacity(min(maximum, current.order.count - current.next))
        while taken.count < maximum, current.next < current.order.count {
            let id = current.order[current.next]
            current.next += 1
            // Written since on its own (a read), or forgotten (a purge); or written and changed
            // again, its changes now waiting since after the cutoff: the next round's.
            guard let state = sessions[id], state.since <= cutoff else { continue }
            sessions[id] = nil
            eventCount -= Int(state.to - state.from)
            taken.append((id, state))
        }
        let more = current.next < current.order.count
        round = more ? current : nil
        // In the sessions' order: every instance's state writes lock the sessions' rows in the
        // same order, so two of them never wait for each other (PostgreSQL).
        taken.sort { $0.session.rawValue < $1.session.rawValue }
        return (taken, more)
    }

    /// The order of a round of writes behind: the sessions whose changes waited since its
    /// cutoff or earlier when it began, those that waited longest first, and how far its parts
    /// have taken them.
    struct Round {
        var cutoff: ContinuousClock.Instant
        var order: [SessionID]
        var next = 0
    }

    /// The round under way, if any.
    var round: Round?
}
