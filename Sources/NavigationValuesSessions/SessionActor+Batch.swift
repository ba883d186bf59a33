import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

// Batches (docs/Stacks.md, Batches).

extension SessionActor {
    /// Applies a batch's operations in order, each checked against the session as the ones before
    /// it left it, and commits them as one event (one version step). The first operation that is
    /// refused is answered, pointing into the batch, and nothing of the batch stays.
    func commitBatch(
        _ body: JSONValue, session: LiveSession, validator: CommandValidator, context: CommandContext
    ) async throws -> MutationResult {
        let seq = session.record.version + 1
        let at = Timestamp.truncated(environment.now())
        let items = try validator.batchOperations(body)
        var events: [SessionEvent] = []
        var changes: [StateChange] = []
        var results: [MutationResult] = []
        for (index, item) in items.enumerated() {
            do {
                let step = try validator.batchStep(item, at: index)
                let operation: SessionOperation
                do {
                    operation = try validator.operation(for: step.command)
                    try OutputLimits(limits: environment.configuration.limits).preflight(operation, on: session)
                } catch {
                    throw step.located(error)
                }
                let applied = try session.applyStep(operation)
                results.append(try session.answer(to: applied.event, version: seq))
                events.append(applied.event)
                changes += applied.changes
            } catch {
                // The steps applied so far changed only the live state: forget it, and the next
                // command reloads the session as the store has it, untouched by this batch.
                if !events.isEmpty || !(error is SessionError) { live = nil }
                throw error
            }
        }
        var applied = Applied(event: .batchApplied(events), changes: changes)
        session.finish(&applied, seq: seq, at: at, isPurge: false)
        let result = try session.answer(to: applied.event, version: seq, steps: results)
        // The batch as a whole obeys the limits one change does: the session it leaves,
        // its one event and its answer, checked before anything is committed.
        let event = RecordedEvent(seq: seq, at: at, event: applied.event)
        let stored: StoredEvent
        do {
            let output = OutputLimits(limits: environment.configuration.limits)
            try output.checkSession(bytes: SessionFootprint(session).sessionBytes)
            stored = StoredEvent(event, session: id)
            try output.check(eventBytes: stored.json.utf8.count, answer: result)
        } catch {
            live = nil
            throw error
        }
        try await store(
            applied, answer: result, of: session, event: event, stored: stored, isPurge: false, context: context)
        return result
    }
}
