import NavigationValues
import NavigationValuesWire

/// A handle on one screen of a remote session: its forward values and its preferences
/// (docs/SEMANTICS.md §2 and §3), by typed key or by name.
///
/// ```swift
/// let inbox = session.screen(.top)
/// try await inbox.set(Title.self, "Inbox")              // PATCH …/values {"title": "Inbox"}
/// let title = try await inbox.resolved(Title.self)      // what the screen reads: "Inbox"
/// try await session.root.setPreferenceHandler(Selection.self, passBack: true)
/// try await inbox.updatePreference(Selection.self, value: "chosen")
/// ```
///
/// Typed keys are the core library's `ValueKey` and `PreferenceKey` types, named on the server as
/// ``RemotelyNamedKey`` says; their values travel as JSON (`Codable`). Named keys take `JSONValue`s.
public struct RemoteScreen: Sendable {
    /// The session this screen belongs to.
    public let session: RemoteSession
    /// Which screen: an id, or the root or top at the time each call is sent.
    public let reference: ScreenReference

    /// The screen as it is now (`GET …/screens/{screen}`).
    public func get() async throws -> ScreenResource {
        let request = APIRequest(method: "GET", path: path(), credential: session.credential)
        let answer = try await session.transport.perform(request)
        return try session.transport.decode(answer, for: request) { json throws(WireDecodingError) in
            try ScreenResource(json: json)
        }
    }

    // MARK: - Typed keys

    /// Writes this screen's own value of `key`; later screens that do not override it read it too.
    @discardableResult
    public func set<K: ValueKey>(_ key: K.Type, _ value: K.Value, ifMatch: Int64? = nil, idempotencyKey: String? = nil)
        async throws -> ValuesResult where K.Value: Encodable
    {
        let json = try encodedValue(value, for: K.remoteName, request: "PATCH \(path("values"))")
        return try await setValues([K.remoteName: json], ifMatch: ifMatch, idempotencyKey: idempotencyKey)
    }

    /// Removes this screen's own value of `key`: it reads what the screen before it resolves to.
    @discardableResult
    public func removeValue<K: ValueKey>(_ key: K.Type, ifMatch: Int64? = nil, idempotencyKey: String? = nil)
        async throws -> ValuesResult
    {
        try await setValues([K.remoteName: nil], ifMatch: ifMatch, idempotencyKey: idempotencyKey)
    }

    /// What `key` reads on this screen now: its own value, an earlier screen's, or the key's
    /// default (the server's, when its schema declares one, else `K.defaultValue`).
    ///
    /// - Throws: `RemoteError` `.invalidValue` when the server's value does not decode as `K.Value`.
    public func resolved<K: ValueKey>(_ key: K.Type) async throws -> K.Value where K.Value: Decodable {
        let screen = try await get()
        guard let json = screen.resolved[K.remoteName], json != .null || K.Value.self == JSONValue.self else {
            return K.defaultValue
        }
        return try decodedValue(json, as: K.Value.self, for: K.remoteName, request: "GET \(path())")
    }

    /// Installs this screen's handler for `key`: it receives every new value published at or above
    /// it and passes it on toward the root (`passBack`) or stops it here.
    @discardableResult
    public func setPreferenceHandler<K: PreferenceKey>(
        _ key: K.Type, passBack: Bool, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> HandlerResult {
        try await setPreferenceHandler(
            named: K.remoteName, passBack: passBack, ifMatch: ifMatch, idempotencyKey: idempotencyKey)
    }

    /// Removes this screen's handler for `key`; the value it last received stays. Returns the new version.
    @discardableResult
    public func removePreferenceHandler<K: PreferenceKey>(
        _ key: K.Type, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> Int64 {
        try await removePreferenceHandler(named: K.remoteName, ifMatch: ifMatch, idempotencyKey: idempotencyKey)
    }

    /// Publishes `value` for `key`, starting the walk at this screen itself (docs/SEMANTICS.md §3).
    @discardableResult
    public func updatePreference<K: PreferenceKey>(
        _ key: K.Type, value: K.Value, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> PublishResult where K.Value: Encodable {
        let json = try encodedValue(value, for: K.remoteName, request: "POST \(path("preferences", K.remoteName))")
        return try await updatePreference(
            named: K.remoteName, value: json, ifMatch: ifMatch, idempotencyKey: idempotencyKey)
    }

    /// Publishes `value` for `key` from this screen, then pops it, or dismisses the presentation it
    /// is the root of (`POST …/screens/{screen}/return`): a sheet sending its result back.
    @discardableResult
    public func returnResult<K: PreferenceKey>(
        _ key: K.Type, value: K.Value, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> ReturnResult where K.Value: Encodable {
        let json = try encodedValue(value, for: K.remoteName, request: "POST \(path("return"))")
        return try await returnResult(
            named: K.remoteName, value: json, ifMatch: ifMatch, idempotencyKey: idempotencyKey)
    }

    /// The last value this screen's handler received for `key`, or `K.defaultValue`.
    ///
    /// - Throws: `RemoteError` `.invalidValue` when the server's value does not decode as `K.Value`.
    public func preference<K: PreferenceKey>(_ key: K.Type) async throws -> K.Value where K.Value: Decodable {
        guard let json = try await get().preferences[K.remoteName] else { return K.defaultValue }
        return try decodedValue(json, as: K.Value.self, for: K.remoteName, request: "GET \(path())")
    }

    // MARK: - Named keys

    /// Sets and removes this screen's own values in one change (`PATCH …/values`); a nil value
    /// removes the override.
    ///
    /// ```swift
    /// try await screen.setValues(["title": "y", "counter": nil])
    /// ```
    @discardableResult
    public func setValues(_ values: [String: JSONValue?], ifMatch: Int64? = nil, idempotencyKey: String? = nil)
        async throws -> ValuesResult
    {
        let body = JSONValue.object(values.mapValues { $0 ?? .null })
        return try await session.mutate("PATCH", path("values"), body, .valuesUpdated, ifMatch, idempotencyKey) {
            $0.valuesResult
        }
    }

    /// What the named key reads on this screen now; nil when no screen set it and the schema
    /// declares no default.
    public func resolvedValue(named name: String) async throws -> JSONValue? {
        try await get().resolved[name]
    }

    /// Installs this screen's handler for the named key.
    @discardableResult
    public func setPreferenceHandler(
        named name: String, passBack: Bool, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> HandlerResult {
        try await session.mutate(
            "PUT", path("handlers", name), ["passBack": .bool(passBack)], .handlerSet, ifMatch, idempotencyKey
        ) { $0.handlerResult }
    }

    /// Removes this screen's handler for the named key (`.notFound` when it has none). Returns the
    /// new version.
    @discardableResult
    public func removePreferenceHandler(named name: String, ifMatch: Int64? = nil, idempotencyKey: String? = nil)
        async throws -> Int64
    {
        try await session.mutate("DELETE", path("handlers", name), nil, .handlerRemoved, ifMatch, idempotencyKey) {
            $0.version
        }
    }

    /// Publishes a value for the named key from this screen.
    @discardableResult
    public func updatePreference(
        named name: String, value: JSONValue, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> PublishResult {
        try await session.mutate(
            "POST", path("preferences", name), ["value": value], .published, ifMatch, idempotencyKey
        ) { $0.publishResult }
    }

    /// Publishes a value for the named key from this screen, then pops it (or dismisses the
    /// presentation it is the root of).
    @discardableResult
    public func returnResult(
        named name: String, value: JSONValue, ifMatch: Int64? = nil, idempotencyKey: String? = nil
    ) async throws -> ReturnResult {
        try await session.mutate(
            "POST", path("return"), ["key": .string(name), "value": value], .returned, ifMatch, idempotencyKey
        ) { $0.returnResult }
    }

    /// The last value this screen's handler received for the named key; nil when none.
    public func receivedPreference(named name: String) async throws -> JSONValue? {
        try await get().preferences[name]
    }

    // MARK: - Pieces

    func path(_ segments: String...) -> String {
        HTTPTransport.path(["v1", "sessions", session.id.rawValue, "screens", reference.description] + segments)
    }
}
