import NavigationValues
import NavigationValuesWire

extension RemoteTree {
    /// One screen of the mirror, in any stack: reads are local and observed (inside
    /// `withObservationTracking`, or a SwiftUI body, a read tracks that key on that screen); changes
    /// go through `remote`.
    ///
    /// ```swift
    /// let title = tree.visibleScreen?.resolved(Title.self)     // "" until a screen sets it
    /// try await tree.visibleScreen?.remote.set(Title.self, "Inbox")
    /// ```
    public struct Screen: Identifiable {
        /// The screen's id on the server.
        public let id: ScreenID
        /// The screen's name (its route).
        public let name: String
        /// The stack that holds it.
        public let stack: StackID
        let context: ScreenContext
        let keys: SchemaValueKeys
        let session: RemoteSession

        /// This screen on the server, to change it.
        public var remote: RemoteScreen { session.screen(id: id) }

        /// What `key` reads here: this screen's own value, an earlier screen's (a presentation's
        /// root reads its presenter's), the schema's default, or `K.defaultValue`. A value that does
        /// not decode as `K.Value` also reads as `K.defaultValue` (a schema that disagrees with the
        /// app's key); `resolvedValue(named:)` shows the JSON.
        public func resolved<K: ValueKey>(_ key: K.Type) -> K.Value where K.Value: Decodable {
            let json = context.value(for: keys.key(K.remoteName))
            guard json != .null || K.Value.self == JSONValue.self else { return K.defaultValue }
            return (try? json.decoded(as: K.Value.self)) ?? K.defaultValue
        }

        /// What the named key reads here; nil when no screen up to this one set it and the schema
        /// declares no default.
        public func resolvedValue(named name: String) -> JSONValue? {
            let json = context.value(for: keys.key(name))
            return json == .null ? nil : json
        }

        /// This screen's own value of the named key, if it has one.
        public func value(named name: String) -> JSONValue? {
            context.localValue(for: keys.key(name))
        }

        /// This screen's own values, by name (what it was pushed with, and written since).
        public var values: [String: JSONValue] { context.localNamedValues }

        /// The last value this screen's handler received for `key`, or `K.defaultValue`.
        public func preference<K: PreferenceKey>(_ key: K.Type) -> K.Value where K.Value: Decodable {
            guard let json = context.receivedPreference(named: K.remoteName) else { return K.defaultValue }
            return (try? json.decoded(as: K.Value.self)) ?? K.defaultValue
        }

        /// The last value this screen's handler received for the named key; nil when none.
        public func receivedPreference(named name: String) -> JSONValue? {
            context.receivedPreference(named: name)
        }

        /// Whether this screen's handler for the named key passes values back; nil when it has none.
        public func handlerPassesBack(named name: String) -> Bool? {
            context.preferenceHandlerPassesBack(named: name)
        }
    }
}
