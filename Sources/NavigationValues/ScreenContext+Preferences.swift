import Observation

// Backward preferences (docs/SEMANTICS.md §3): a publish walks from the publishing screen itself along
// `previous`; screens without a handler are transparent, a handler receives the value and passes it
// on (possibly changed) or stops it. Each handler remembers the last value it received and its
// decision, so the same value arriving again is not delivered twice.

/// What a handler decided for the last value it received.
public enum PreferenceDecision: Equatable, Sendable {
    /// It passed a value on (possibly another one than it received).
    case passedBack(JSONValue)
    /// It kept the value: the walk stopped there.
    case stopped
}

/// The result of one publish: every screen the walk visited, what each did, who received what,
/// and where the walk stopped.
public struct PreferenceWalk {
    /// Every screen the walk visited, from the publisher on along `previous`, in walk order.
    public var hops: [PreferenceHop]

    /// Each screen whose handler was called, in walk order, with the value it received.
    public var deliveries: [(screen: ScreenContext, value: Any)] {
        hops.compactMap { hop in
            guard hop.handling == .called, let screen = hop.screen else { return nil }
            return (screen, hop.received)
        }
    }

    /// The screen whose handler (or remembered decision) stopped the walk; nil when it went past the root.
    public var stoppedAt: ScreenContext? {
        guard let last = hops.last, last.passed == nil else { return nil }
        return last.screen
    }
}

/// One screen a preference walk visited (SEMANTICS.md §3).
public struct PreferenceHop {
    /// What the screen did with the value that reached it.
    public enum Handling: String, Sendable {
        /// It has no handler for the key: the value went on unchanged.
        case transparent
        /// Its handler was called with the value, which it recorded as received.
        case called
        /// Its handler had already received this value: not called again, its remembered decision applied.
        case remembered
    }

    /// The screen (weak: it may have been popped since).
    public weak var screen: ScreenContext?
    /// The id a `ScreenStack` gave the screen, kept when the screen is gone; nil for a context outside a stack.
    public var screenID: ScreenID?
    public var handling: Handling
    /// The value that reached the screen.
    public var received: Any
    /// What the screen passed on toward `previous` (the value itself when transparent); nil when it
    /// stopped the walk there.
    public var passed: Any?
}

/// How a screen's last received value of a key got there: the walk that delivered it, and this
/// screen's hop in it. Kept by the screen until the next delivery of the key, or `cleanup()`.
public struct PreferenceArrival {
    /// The whole walk that delivered the value, publisher first (on past this screen when it passed
    /// the value on).
    public var hops: [PreferenceHop]
    /// This screen's position in `hops`.
    public var index: Int

    /// The hop of the screen that published (the first of the walk).
    public var publisher: PreferenceHop { hops[0] }
}

/// A handler and its memory of the last delivery.
struct PreferenceHandler {
    enum Decision {
        case passed(Any)
        case stopped
    }

    var generation: Int
    /// For handlers installed with a fixed decision (`setPreferenceHandler(named:passBack:)`).
    var passBack: Bool?
    /// Calls the handler with a value and a pass-back function.
    var call: (Any, @escaping (Any) -> Void) -> Void
    var equals: (Any, Any) -> Bool
    var lastReceived: Any?
    var decision: Decision?
}

extension ScreenContext {
    // MARK: - Typed keys

    /// Registers this screen's handler for `key`, replacing any earlier one (and forgetting its
    /// memory). Call `passBack` to continue the value toward earlier screens, possibly changed; do
    /// not call it to stop the value here. A `passBack` made after the handler returned continues the
    /// walk from this screen then.
    ///
    /// ```swift
    /// root.onPreferenceChange(Selection.self) { value, passBack in passBack(value) }
    /// ```
    public func onPreferenceChange<K: PreferenceKey>(
        _ key: K.Type,
        perform handler: @escaping (K.Value, _ passBack: @escaping (K.Value) -> Void) -> Void
    ) {
        installHandler(
            .type(ObjectIdentifier(key)),
            call: { value, passBack in
                guard let value = value as? K.Value else { return }
                handler(value) { passBack($0) }
            },
            equals: { ($0 as? K.Value) == ($1 as? K.Value) })
    }

    /// Removes this screen's handler for `key`; the screen becomes transparent for it. The last value
    /// it received stays readable until `cleanup()`.
    public func removePreferenceHandler<K: PreferenceKey>(_ key: K.Type) {
        removeHandler(.type(ObjectIdentifier(key)))
    }

    /// Whether this screen has a handler for `key`.
    public func hasPreferenceHandler<K: PreferenceKey>(_ key: K.Type) -> Bool {
        handlers[.type(ObjectIdentifier(key))] != nil
    }

    /// The last value this screen's handler received for `key`, or the key's default.
    public func preference<K: PreferenceKey>(_ key: K.Type) -> K.Value {
        let id = EntryID.type(ObjectIdentifier(key))
        registrar.access(self, keyPath: ObservationKeyPaths.preference(id))
        return received[id] as? K.Value ?? K.defaultValue
    }

    /// The walk that brought the last value this screen's handler for `key` received; nil when it
    /// received nothing, or the value was restored rather than delivered here.
    public func preferenceArrival<K: PreferenceKey>(_ key: K.Type) -> PreferenceArrival? {
        arrivals[.type(ObjectIdentifier(key))]
    }

    /// Publishes `value` for `key`, starting the walk at this screen itself.
    @discardableResult
    public func updatePreference<K: PreferenceKey>(_ key: K.Type, value: K.Value) -> PreferenceWalk {
        walkPreference(.type(ObjectIdentifier(key)), value: value, equals: { ($0 as? K.Value) == ($1 as? K.Value) })
    }

    // MARK: - Named keys (the server's JSON preferences)

    /// Registers a handler for the named key that always passes the value back (`passBack: true`) or
    /// always stops it (`false`), as the server's `PUT …/handlers/{key}` does.
    package func setPreferenceHandler(named name: String, passBack: Bool) {
        installHandler(
            .name(name),
            call: { value, pass in if passBack { pass(value) } },
            equals: jsonEquals)
        handlers[.name(name)]?.passBack = passBack
    }

    /// The fixed decision of the named key's handler: nil when there is none, or when it is a closure.
    package func preferenceHandlerPassesBack(named name: String) -> Bool? {
        handlers[.name(name)]?.passBack
    }

    /// The named keys this screen has handlers for, sorted.
    public var namedPreferenceHandlerKeys: [String] {
        handlers.keys.compactMap { id in
            if case .name(let name) = id { name } else { nil }
        }.sorted()
    }

    /// Registers a closure handler for the named key.
    public func onPreferenceChange(
        named name: String,
        perform handler: @escaping (JSONValue, _ passBack: @escaping (JSONValue) -> Void) -> Void
    ) {
        installHandler(
            .name(name),
            call: { value, pass in
                guard let value = value as? JSONValue else { return }
                handler(value) { pass($0) }
            },
            equals: jsonEquals)
    }

    /// Removes the handler for the named key.
    public func removePreferenceHandler(named name: String) {
        removeHandler(.name(name))
    }

    /// Whether this screen has a handler for the named key.
    public func hasPreferenceHandler(named name: String) -> Bool {
        handlers[.name(name)] != nil
    }

    /// The last value this screen's handler received for the named key, nil when none.
    public func receivedPreference(named name: String) -> JSONValue? {
        let id = EntryID.name(name)
        registrar.access(self, keyPath: ObservationKeyPaths.preference(id))
        return received[id] as? JSONValue
    }

    /// The walk that brought the last value this screen's handler for the named key received; nil
    /// when it received nothing, or the value was restored (a session reloaded from storage) or
    /// mirrored rather than delivered by a walk in this process.
    public func preferenceArrival(named name: String) -> PreferenceArrival? {
        arrivals[.name(name)]
    }

    /// Whether this screen keeps the walk of any value it received (`preferenceArrival(named:)`):
    /// state made by a walk in this process, which storage does not keep.
    package var hasPreferenceArrivals: Bool { !arrivals.isEmpty }

    /// Every named preference this screen's handlers received, by key.
    public var receivedNamedPreferences: [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for (id, value) in received {
            if case .name(let name) = id, let json = value as? JSONValue { result[name] = json }
        }
        return result
    }

    /// The handler memory of the named key: what it last received and decided; nil when it has
    /// no handler or the handler received nothing yet.
    package func preferenceMemory(named name: String) -> (received: JSONValue, decision: PreferenceDecision)? {
        guard let handler = handlers[.name(name)], let last = handler.lastReceived as? JSONValue,
            let decision = handler.decision
        else { return nil }
        switch decision {
        case .passed(let value): return (last, .passedBack(value as? JSONValue ?? .null))
        case .stopped: return (last, .stopped)
        }
    }

    /// Restores state saved earlier (the server reloading a session): a received value, and the
    /// memory of the named key's current handler.
    package func restorePreference(
        named name: String, received value: JSONValue?, memory: (received: JSONValue, decision: PreferenceDecision)?
    ) {
        let id = EntryID.name(name)
        if let value {
            received[id] = value
            arrivals[id] = nil  // the walk that brought it was not saved
        }
        if let memory, handlers[id] != nil {
            handlers[id]?.lastReceived = memory.received
            switch memory.decision {
            case .passedBack(let passed): handlers[id]?.decision = .passed(passed)
            case .stopped: handlers[id]?.decision = .stopped
            }
        }
    }

    /// Records `value` as the last value this screen's handler for the named key received, and tells
    /// its observers, without calling a handler or walking on: for a mirror of a walk the server did
    /// (its `deliveries`). An equal value changes nothing and notifies no one.
    package func recordReceivedPreference(named name: String, value: JSONValue) {
        let id = EntryID.name(name)
        guard received[id] as? JSONValue != value else { return }
        arrivals[id] = nil  // a mirror records the value, not the walk
        if isObservable {
            mutate(ObservationKeyPaths.preference(id)) { received[id] = value }
        } else {
            received[id] = value
        }
    }

    /// Publishes `value` for the named key, starting the walk at this screen itself.
    @discardableResult
    public func updatePreference(named name: String, value: JSONValue) -> PreferenceWalk {
        walkPreference(.name(name), value: value, equals: jsonEquals)
    }

    // MARK: - The walk

    private func installHandler(_ id: EntryID, call: @escaping (Any, @escaping (Any) -> Void) -> Void,
                                equals: @escaping (Any, Any) -> Bool) {
        handlerGeneration &+= 1
        handlers[id] = PreferenceHandler(generation: handlerGeneration, call: call, equals: equals)
    }

    private func removeHandler(_ id: EntryID) {
        guard handlers.removeValue(forKey: id) != nil else { return }
        handlerGeneration &+= 1
    }

    /// Walks `value` from this screen along `previous` (SEMANTICS.md §3), recording every hop;
    /// `before` are hops already made (a late `passBack` continues its screen's walk). Each screen
    /// whose handler was called keeps the walk as its arrival, so what it received can be explained.
    func walkPreference(
        _ id: EntryID, value: Any, equals: (Any, Any) -> Bool, after before: [PreferenceHop] = []
    ) -> PreferenceWalk {
        var walk = PreferenceWalk(hops: before)
        var receivers: [(screen: ScreenContext, index: Int)] = []
        var current: ScreenContext? = self
        var value: Any? = value
        while let screen = current, let arriving = value {
            var hop = PreferenceHop(
                screen: screen, screenID: screen.screenID, handling: .transparent, received: arriving, passed: arriving)
            if let handler = screen.handlers[id] {
                if let last = handler.lastReceived, let decision = handler.decision, equals(last, arriving) {
                    // The same value again: no duplicate delivery; the remembered decision applies.
                    hop.handling = .remembered
                    if case .passed(let passed) = decision { hop.passed = passed } else { hop.passed = nil }
                } else {
                    hop.handling = .called
                    receivers.append((screen, walk.hops.count))
                    hop.passed = screen.deliver(arriving, to: id, handler: handler)
                }
            }
            walk.hops.append(hop)
            value = hop.passed
            current = screen.previousLink
        }
        for receiver in receivers {
            receiver.screen.arrivals[id] = PreferenceArrival(hops: walk.hops, index: receiver.index)
        }
        return walk
    }

    /// Calls the handler, records the received value and the decision; returns what it passed back
    /// during the call, or nil when it stopped the value.
    private func deliver(_ value: Any, to id: EntryID, handler: PreferenceHandler) -> Any? {
        if isObservable {
            mutate(ObservationKeyPaths.preference(id)) { received[id] = value }
        } else {
            received[id] = value
        }
        var isCalling = true
        var passed: Any?
        let generation = handler.generation
        handler.call(value) { [weak self] passedValue in
            if isCalling {
                passed = passedValue
            } else {
                self?.latePassBack(passedValue, id: id, generation: generation)
            }
        }
        isCalling = false
        // A handler that replaced itself during the call leaves the new one's memory alone.
        if handlers[id]?.generation == generation {
            handlers[id]?.lastReceived = value
            handlers[id]?.decision = passed.map { .passed($0) } ?? .stopped
        }
        return passed
    }

    /// A `passBack` made after the handler returned: continue the walk from the previous screen.
    private func latePassBack(_ value: Any, id: EntryID, generation: Int) {
        guard let handler = handlers[id], handler.generation == generation else { return }
        handlers[id]?.decision = .passed(value)
        let own = PreferenceHop(
            screen: self, screenID: screenID, handling: .called, received: handler.lastReceived ?? value, passed: value)
        _ = previousLink?.walkPreference(id, value: value, equals: handler.equals, after: [own])
    }
}

private func jsonEquals(_ lhs: Any, _ rhs: Any) -> Bool {
    (lhs as? JSONValue) == (rhs as? JSONValue)
}
