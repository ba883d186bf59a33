import Observation

// Forward values (docs/SEMANTICS.md §2): each context stores only its own overrides; a read falls back
// along `previous` to the key's default; a write notifies the screen and every screen inheriting
// the key from it, and only when the resolved value changed.

extension ScreenContext {
    // MARK: - Typed keys

    /// Reads what `key` resolves to on this screen; writes this screen's own override.
    ///
    /// ```swift
    /// detail[TitleKey.self] = "Detail"   // earlier screens keep theirs
    /// ```
    public subscript<K: ValueKey>(key: K.Type) -> K.Value {
        get {
            let id = EntryID.type(ObjectIdentifier(key))
            if !K.isObservationIgnored {
                registrar.access(self, keyPath: ObservationKeyPaths.value(id))
            }
            return resolvedEntry(id) as? K.Value ?? K.defaultValue
        }
        set {
            setEntry(
                .type(ObjectIdentifier(key)), to: newValue, isObservationIgnored: K.isObservationIgnored,
                defaultValue: K.defaultValue)
        }
    }

    /// Whether this screen has its own override of `key` (inherited values do not count).
    public func hasValue<K: ValueKey>(_ key: K.Type) -> Bool {
        values[.type(ObjectIdentifier(key))] != nil
    }

    /// Removes this screen's override of `key`: it (and the screens inheriting from it) falls back to
    /// what `previous` resolves to.
    public func removeValue<K: ValueKey>(_ key: K.Type) {
        _ = removeEntry(
            .type(ObjectIdentifier(key)), isObservationIgnored: K.isObservationIgnored, defaultValue: K.defaultValue)
    }

    // MARK: - Named keys (the server's JSON values)

    /// Reads what the named key resolves to on this screen.
    public func value(for key: NamedValueKey) -> JSONValue {
        let id = EntryID.name(key.name)
        if !key.isObservationIgnored {
            registrar.access(self, keyPath: ObservationKeyPaths.value(id))
        }
        return resolvedEntry(id) as? JSONValue ?? key.defaultValue
    }

    /// Reads what the named key resolves to without registering an observation dependency: for
    /// code that never observes, such as the server building a response.
    public func untrackedValue(for key: NamedValueKey) -> JSONValue {
        resolvedEntry(.name(key.name)) as? JSONValue ?? key.defaultValue
    }

    /// The screen's own override of the named key, if it has one.
    public func localValue(for key: NamedValueKey) -> JSONValue? {
        values[.name(key.name)] as? JSONValue
    }

    /// Whether this screen has its own override of the named key.
    public func hasValue(for key: NamedValueKey) -> Bool {
        values[.name(key.name)] != nil
    }

    /// Writes this screen's override of the named key.
    ///
    /// - Returns: the screens whose resolved value of the key changed (this one first, then the
    ///   screens inheriting from it, nearest first); empty for an equal value or an
    ///   observation-ignored key. The server reports them as `affected`.
    @discardableResult
    public func setValue(_ value: JSONValue, for key: NamedValueKey) -> [ScreenContext] {
        setEntry(
            .name(key.name), to: value, isObservationIgnored: key.isObservationIgnored, defaultValue: key.defaultValue)
    }

    /// Removes this screen's override of the named key.
    ///
    /// - Returns: the screens whose resolved value changed, as for `setValue(_:for:)`.
    @discardableResult
    public func removeValue(for key: NamedValueKey) -> [ScreenContext] {
        removeEntry(.name(key.name), isObservationIgnored: key.isObservationIgnored, defaultValue: key.defaultValue)
    }

    /// This screen's own named overrides.
    public var localNamedValues: [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        for (id, value) in values {
            if case .name(let name) = id, let json = value as? JSONValue { result[name] = json }
        }
        return result
    }

    /// Every name that has an override on this screen or an earlier one, with what it resolves to
    /// here (the server's `resolved`, before declared defaults are added).
    public var resolvedNamedValues: [String: JSONValue] {
        var result: [String: JSONValue] = [:]
        var current: ScreenContext? = self
        while let context = current {
            for (id, value) in context.values {
                if case .name(let name) = id, result[name] == nil, let json = value as? JSONValue {
                    result[name] = json
                }
            }
            current = context.previousLink
        }
        return result
    }

    // MARK: - Storage and notification


    /// The value `id` resolves to here: the nearest override along `previous`, or nil (the default).
    func resolvedEntry(_ id: EntryID) -> Any? {
        var current: ScreenContext? = self
        while let context = current {
            if !context.values.isEmpty, let value = context.values[id] { return value }
            current = context.previousLink
        }
        return nil
    }

    @discardableResult
    func setEntry(_ id: EntryID, to newValue: Any, isObservationIgnored: Bool, defaultValue: Any) -> [ScreenContext] {
        if isObservationIgnored {
            values[id] = newValue
            return []
        }
        let old = resolvedEntry(id) ?? defaultValue
        // An equal write still creates the override, which then shields later screens.
        guard !valuesAreEqual(old, newValue) else {
            values[id] = newValue
            return []
        }
        let affected = inheritors(of: id)
        notify(affected, id: id) { values[id] = newValue }
        return affected
    }

    func removeEntry(_ id: EntryID, isObservationIgnored: Bool, defaultValue: Any?) -> [ScreenContext] {
        guard let old = values[id] else { return [] }
        if isObservationIgnored {
            values[id] = nil
            return []
        }
        let fallback = previousLink?.resolvedEntry(id) ?? defaultValue
        if let fallback, valuesAreEqual(old, fallback) {
            values[id] = nil
            return []
        }
        let affected = inheritors(of: id)
        notify(affected, id: id) { values[id] = nil }
        return affected
    }

    /// This screen and every screen whose `previous` chain reaches it without passing a screen with
    /// its own override of `id` (docs/SEMANTICS.md §2: follow `previous` links, not `next`).
    func inheritors(of id: EntryID) -> [ScreenContext] {
        var result: [ScreenContext] = [self]
        // A chain has no cycles through `previous` unless a custom behaviour made one; the set
        // guards against that, and is only built once a context has more than one successor.
        var seen: Set<ObjectIdentifier>?
        var index = 0
        func visit(_ successor: ScreenContext?, of context: ScreenContext) {
            guard let successor, successor.previousLink === context, successor.values[id] == nil,
                successor !== self
            else { return }
            if seen != nil || !context.moreSuccessors.isEmpty {
                if seen == nil { seen = Set(result.map(ObjectIdentifier.init)) }
                guard seen?.insert(ObjectIdentifier(successor)).inserted == true else { return }
            } else if result.count > 10_000, result.contains(where: { $0 === successor }) {
                return
            }
            result.append(successor)
        }
        while index < result.count {
            let context = result[index]
            index += 1
            visit(context.firstSuccessor, of: context)
            for link in context.moreSuccessors { visit(link.context, of: context) }
        }
        return result
    }


    private func notify(_ contexts: [ScreenContext], id: EntryID, change: () -> Void) {
        // Only contexts that were ever read tracked have a registrar; when none has, there is no
        // observer to tell and no key path to build (building one costs about a microsecond).
        let observed = contexts.filter(\.isObservable)
        guard !observed.isEmpty else {
            change()
            return
        }
        let keyPath = ObservationKeyPaths.value(id)
        for context in observed {
            context.willSet(keyPath)
        }
        change()
        for context in observed {
            context.didSet(keyPath)
        }
    }
}

/// Whether two stored values are equal; values that are not Equatable are never equal, so every
/// write of them notifies.
func valuesAreEqual(_ lhs: Any, _ rhs: Any) -> Bool {
    guard let lhs = lhs as? any Equatable else { return false }
    return lhs.isEqual(to: rhs)
}

extension Equatable {
    fileprivate func isEqual(to other: Any) -> Bool {
        guard let other = other as? Self else { return false }
        return self == other
    }
}

/// A forward value identified by name, for the server's JSON API. Shares storage and rules with
/// typed keys.
public struct NamedValueKey: Hashable, Sendable {
    /// The key's name (`title`).
    public var name: String
    /// What a screen reads when no screen up the chain wrote it.
    public var defaultValue: JSONValue
    /// Stored and readable, but changes notify no one and are never `affected`.
    public var isObservationIgnored: Bool

    public init(_ name: String, defaultValue: JSONValue = .null, isObservationIgnored: Bool = false) {
        self.name = name
        self.defaultValue = defaultValue
        self.isObservationIgnored = isObservationIgnored
    }
}
