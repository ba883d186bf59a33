import NavigationValues
import NavigationValuesWire

/// The limits on what a session renders, records and answers, as opposed to what a request
/// carries: what a client can make the server write and send without sending as much itself.
///
/// docs/API.md's shapes multiply what is stored: every screen's `resolved` repeats the declared
/// defaults and every value set below it, `affected` repeats a value per inheriting screen,
/// `deliveries` per receiving screen. The shapes stay as they are; the multiplication is bounded
/// instead:
///
/// - a schema's defaults obey the value limits, and their bytes together and the count of
///   entries are capped (`maxDefaultBytes`, `maxSchemaEntries`);
/// - the whole session may not render past `maxSessionBytes`, which bounds every read of it;
/// - one event, and one mutation's answer, may not pass `maxEventBytes`.
///
/// Measuring the session walks every screen; a push, the most common change, instead grows an
/// upper bound of the session's size (`RenderedBytesBound`) by what one screen can add, and the
/// session is measured exactly only when that bound reaches the limit.
///
/// Each check runs before the bytes it guards are produced: the path's screens, `affected` and
/// `deliveries` are counted before the operation is applied, the session after it is applied in
/// memory but before anything is encoded or committed. A refusal is `.limitExceeded` (422)
/// naming the limit; the caller drops the half-changed live state, so nothing is kept.
struct OutputLimits {
    let limits: SessionLimits

    // MARK: - Schemas

    /// Checks a schema's defaults and entries; `pointer` is where the schema sits in the request.
    func check(_ schema: SessionSchema, pointer: String = "/schema") throws(SessionError) {
        let entries = schema.values.count + schema.preferences.count
        guard entries <= limits.maxSchemaEntries else {
            throw .limitExceeded(
                "max-schema-entries",
                "a schema declares at most \(limits.maxSchemaEntries) entries, values and preferences together; this one declares \(entries) (max-schema-entries)"
            )
        }
        var problems: [SessionError.FieldError] = []
        var total = 0
        for (section, declared) in [("values", schema.values), ("preferences", schema.preferences)] {
            for (name, entry) in declared {
                let here = "\(pointer)/\(section)/\(JSONPointer.escaped(name))/default"
                let size = entry.defaultValue.serializedByteCount
                total += size
                if entry.defaultValue.depth > limits.maxNesting {
                    problems.append(.init(pointer: here, detail: "nested deeper than \(limits.maxNesting)"))
                } else if size > limits.maxValueBytes {
                    problems.append(.init(pointer: here, detail: "larger than \(limits.maxValueBytes) bytes of JSON"))
                }
            }
        }
        if !problems.isEmpty {
            let sorted = problems.sorted { $0.pointer < $1.pointer }
            throw SessionError(
                .invalid, sorted.count == 1 ? sorted[0].detail : "\(sorted.count) invalid defaults", fieldErrors: sorted
            )
        }
        guard total <= limits.maxDefaultBytes else {
            throw .limitExceeded(
                "max-default-bytes",
                "a schema's defaults are at most \(limits.maxDefaultBytes) bytes of JSON together (every screen lists them); these are \(total) (max-default-bytes)"
            )
        }
    }

    // MARK: - Before applying

    /// Refuses an operation whose event or answer would multiply past the limits, counted from
    /// the session as it is, before anything is applied or rendered.
    func preflight(_ operation: SessionOperation, on session: LiveSession) throws(SessionError) {
        switch operation {
        case .replacePath(let stack, _, let pushed) where stack == .main:
            guard let root = session.stack.firstEntry else { return }
            let footprint = SessionFootprint(
                layers: [SessionFootprint.Layer(root)] + pushed.map(SessionFootprint.Layer.init),
                defaults: session.schema.values.mapValues(\.defaultValue), envelopeBytes: session.envelopeBytes)
            let pushedBytes = footprint.screenBytes.dropFirst().reduce(0, +) + max(0, pushed.count - 1)
            try checkEvent(
                bytes: pushedBytes,
                "the \(pushed.count) screen(s) of this path would render as \(pushedBytes) bytes of JSON"
            )
            try checkSession(bytes: footprint.sessionBytes)
        case .updateValues(let screen, let set, let removed):
            try checkAffected(screen: screen, set: set, removed: removed, in: session)
        case .publish(let screen, let key, let value), .returnResult(let screen, let key, let value):
            try checkDeliveries(screen: screen, key: key, value: value, in: session)
        case .push, .pop, .setHandler, .removeHandler, .end, .createStack, .selectStack, .removeStack, .moveStack,
            .present, .dismiss:
            return  // a push renders one screen, which the session's own limit bounds; the rest shrink
        case .replacePath, .replaceAbove, .batch:
            // Screens of another stack inherit what the main stack's count does not see: the
            // session's limit, checked once they are applied and before anything is encoded, bounds them.
            return
        }
    }

    /// `affected` lists each screen that inherits a changed key (docs/SEMANTICS.md §2); counted as
    /// if every write changed what it resolves to.
    private func checkAffected(
        screen: ScreenID, set: [String: JSONValue], removed: [String], in session: LiveSession
    ) throws(SessionError) {
        let entries = session.stack.entries
        guard let index = session.stack.index(of: screen) else { return }
        var bytes = 2
        var count = 0
        for name in Array(set.keys) + removed {
            let key = session.valueKey(name)
            if key.isObservationIgnored { continue }
            let value =
                set[name] ?? (index > 0 ? entries[index - 1].context.untrackedValue(for: key) : key.defaultValue)
            let perEntry = Self.emptyAffectedBytes + JSONValue.stringByteCount(name) - 2 + value.serializedByteCount - 4
            var position = index
            repeat {
                bytes += perEntry + JSONValue.stringByteCount(entries[position].id.rawValue) - 2 + 1
                count += 1
                position += 1
            } while position < entries.count && !entries[position].context.hasValue(for: key)
            if bytes > limits.maxEventBytes { break }
        }
        try checkEvent(
            bytes: bytes, "this change would list at least \(count) affected value(s), \(bytes) bytes of JSON")
    }

    /// `deliveries` lists each screen whose handler receives the value, from the publisher down
    /// to the first handler that stops it (docs/SEMANTICS.md §3); every server handler passes on the
    /// value it received.
    private func checkDeliveries(
        screen: ScreenID, key: String, value: JSONValue, in session: LiveSession
    ) throws(SessionError) {
        let entries = session.stack.entries
        guard let index = session.stack.index(of: screen) else { return }
        let perEntry = Self.emptyDeliveryBytes + value.serializedByteCount - 4
        var bytes = 2
        var count = 0
        for position in stride(from: index, through: 0, by: -1) {
            guard let passesBack = entries[position].context.preferenceHandlerPassesBack(named: key) else { continue }
            bytes += perEntry + JSONValue.stringByteCount(entries[position].id.rawValue) - 2 + 1
            count += 1
            if !passesBack { break }
        }
        try checkEvent(bytes: bytes, "this value would be delivered to \(count) screen(s), \(bytes) bytes of JSON")
    }

    // MARK: - After applying, before encoding

    /// Refuses a change that grew the session past `maxSessionBytes`; `operation` has just been
    /// applied to `session` in memory, moving it to `version`. What it measures becomes the
    /// session's bound (`LiveSession.renderedBytesBound`) at `version`.
    func checkApplied(_ operation: SessionOperation, to session: LiveSession, version: Int64) throws(SessionError) {
        switch operation {
        case .push, .replacePath, .updateValues, .setHandler, .publish, .createStack, .present, .replaceAbove,
            .returnResult, .batch:
            let bytes = SessionFootprint(session).sessionBytes
            session.renderedBytesBound = RenderedBytesBound(version: version, bytes: bytes)
            try checkSession(bytes: bytes)
        case .pop, .removeHandler:
            // Each shrinks what the session renders: what goes (a popped screen names the one
            // below it, which becomes the top) is more than what the version and the visible
            // screen's id may grow by. The bound holds, with the same slack as a push's.
            session.renderedBytesBound = session.renderedBytesBound.flatMap { bound in
                bound.version == version - 1
                    ? RenderedBytesBound(version: version, bytes: bound.bytes + RenderedBytesBound.slack) : nil
            }
        case .end, .selectStack, .removeStack, .moveStack, .dismiss:
            session.renderedBytesBound = nil  // measured again when next needed
        }
    }

    /// For a push of one screen (`.push`), just applied to `session` at `version`:
    /// true when the session's bound at the version before, grown by what the push can add, is
    /// within `maxSessionBytes`; the grown bound is then kept. False when there is no such bound
    /// or it passes the limit: the caller measures exactly (`checkApplied`), so a push is only
    /// ever refused on the exact figure.
    ///
    /// A push adds its screen (at most its event's bytes, which hold the screen's JSON), a comma,
    /// the new id as the screen below's `next` and as `visibleScreen`, and a digit of `version`.
    func pushStaysWithinBound(
        _ session: LiveSession, version: Int64, eventBytes: Int, screen: ScreenID
    ) -> Bool {
        guard let bound = session.renderedBytesBound, bound.version == version - 1 else { return false }
        let grown = bound.bytes + eventBytes + 2 * JSONValue.stringByteCount(screen.rawValue) + RenderedBytesBound.slack
        guard grown <= limits.maxSessionBytes else { return false }
        session.renderedBytesBound = RenderedBytesBound(version: version, bytes: grown)
        return true
    }

    /// Refuses an encoded event, or a mutation's answer, over `maxEventBytes`.
    func check(eventBytes: Int, answer: MutationResult? = nil) throws(SessionError) {
        try check(eventBytes: eventBytes, answerBytes: answer.map { $0.json?.serializedByteCount ?? 0 })
    }

    /// Refuses an encoded event over `maxEventBytes`, then an answer of `answerBytes` (when given).
    func check(eventBytes: Int, answerBytes: Int?) throws(SessionError) {
        try checkEvent(bytes: eventBytes, "this change's event would be \(eventBytes) bytes of JSON")
        guard let answerBytes else { return }
        try checkEvent(bytes: answerBytes, "this change's answer would be \(answerBytes) bytes of JSON")
    }

    /// Refuses a session that renders past `maxSessionBytes`.
    func checkSession(bytes: Int) throws(SessionError) {
        guard bytes <= limits.maxSessionBytes else {
            throw .limitExceeded(
                "max-session-bytes",
                "this change would make the session \(bytes) bytes of JSON, over the limit of \(limits.maxSessionBytes) (max-session-bytes)"
            )
        }
    }

    // MARK: - Explanations

    /// The session with each screen's explanation (`?explain=1`), refused once it passes
    /// `maxSessionBytes`: a value received through a long walk repeats the walk on every screen it
    /// reached, so an explanation can be much larger than the session. Explanations are added
    /// screen by screen and the count stops at the limit, so no more than that is built.
    func explained(_ session: LiveSession) throws(SessionError) -> SessionResource {
        var resource = session.resource()
        let room = limits.maxSessionBytes - SessionFootprint(session).sessionBytes
        guard session.tree.explain(&resource.screens, &resource.stacks, keys: session.keys, maxBytes: room) else {
            throw Self.explanationTooLarge(limits.maxSessionBytes)
        }
        return resource
    }

    /// Refuses an explained answer of `bytes` over `maxSessionBytes`.
    func checkExplanation(bytes: Int) throws(SessionError) {
        guard bytes <= limits.maxSessionBytes else { throw Self.explanationTooLarge(limits.maxSessionBytes) }
    }

    private static func explanationTooLarge(_ limit: Int) -> SessionError {
        .limitExceeded(
            "max-session-bytes",
            "the explanation would pass \(limit) bytes of JSON (max-session-bytes); ask for one screen's (GET …/screens/{screen}?explain=1)"
        )
    }

    private func checkEvent(bytes: Int, _ what: @autoclosure () -> String) throws(SessionError) {
        guard bytes <= limits.maxEventBytes else {
            throw .limitExceeded(
                "max-event-bytes", "\(what()), over the limit of \(limits.maxEventBytes) (max-event-bytes)")
        }
    }

    /// `{"key":"","screen":"","value":null}`
    private static let emptyAffectedBytes = AffectedValue(screen: ScreenID(""), key: "", value: .null).json
        .serializedByteCount
    /// `{"screen":"","value":null}`
    private static let emptyDeliveryBytes = PreferenceDelivery(screen: ScreenID(""), value: .null).json
        .serializedByteCount
}

extension SessionLimits {
    /// Checks a schema against these limits (its defaults' sizes and depth, their bytes together,
    /// the count of entries), as creating a session with it would; pointers start at the schema.
    ///
    /// - Throws: `SessionError` (`.invalid` or `.limitExceeded`) saying which limit it passes.
    public func check(_ schema: SessionSchema) throws(SessionError) {
        try OutputLimits(limits: self).check(schema, pointer: "")
    }
}

/// An upper bound of the bytes a session renders as, at one version (`OutputLimits`).
struct RenderedBytesBound {
    /// Room for a version's extra digit, a comma and the `updatedAt` text, per change.
    static let slack = 16
    var version: Int64
    var bytes: Int
}
