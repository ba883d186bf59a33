import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

// Sessions rebuilt from storage: from the state tables (the live path after a restart), from a
// snapshot and from the `session.created` event (replay). Stored data that does not fit throws
// `CorruptSessionError`; nothing read back can stop the process.

extension LiveSession {
    // MARK: - From the state tables

    /// Rebuilds a session from its stored rows.
    static func load(_ stored: StoredSession) throws(CorruptSessionError) -> LiveSession {
        let id = stored.record.id
        func parse(_ text: String, _ what: @autoclosure () -> String) throws(CorruptSessionError) -> JSONValue {
            do { return try JSONValue(parsing: text) } catch {
                throw CorruptSessionError(session: id, reason: "\(what()) is not valid JSON: \(error)")
            }
        }
        let schema = try Self.schema(try parse(stored.record.schemaJSON, "the schema"), session: id)
        let session = LiveSession(record: stored.record, schema: schema)
        for screen in stored.screens.sorted(by: { $0.record.index < $1.record.index }) {
            let screenID = screen.record.id.rawValue
            var values: [String: JSONValue] = [:]
            for (name, text) in screen.values {
                values[name] = try parse(text, "value '\(name)' of screen \(screenID)")
            }
            let entry = try session.pushScreen(
                ScreenSeed(id: screen.record.id, name: screen.record.name, values: values))
            for (name, handler) in screen.handlers {
                entry.context.setPreferenceHandler(named: name, passBack: handler.passBack)
            }
            var names = Set(screen.preferences.keys)
            names.formUnion(screen.handlers.keys)
            for name in names {
                let what = "preference '\(name)' of screen \(screenID)"
                var received: JSONValue?
                if let text = screen.preferences[name] { received = try parse(text, what) }
                var memory: (received: JSONValue, decision: PreferenceDecision)?
                if let handler = screen.handlers[name], let last = handler.lastValueJSON {
                    var decision = PreferenceDecision.stopped
                    if let passed = handler.lastPassedJSON { decision = .passedBack(try parse(passed, what)) }
                    memory = (try parse(last, what), decision)
                }
                entry.context.restorePreference(named: name, received: received, memory: memory)
            }
        }
        return session
    }

    // MARK: - From a snapshot (replay)

    /// Rebuilds a session from a snapshot: the session resource with each handler's memory.
    static func load(snapshot: SessionResource) throws(CorruptSessionError) -> LiveSession {
        let id = snapshot.id
        let record = SessionRecord(
            id: id, version: snapshot.version, state: snapshot.state, schemaJSON: "", tokenHash: "",
            createdAt: snapshot.createdAt, updatedAt: snapshot.updatedAt, origin: snapshot.origin)
        let session = LiveSession(record: record, schema: try schema(snapshot.schema, session: id))
        for screen in snapshot.screens {
            let entry = try session.pushScreen(ScreenSeed(screen))
            for (key, handler) in screen.handlers {
                entry.context.setPreferenceHandler(named: key, passBack: handler.passBack)
            }
            for key in Set(screen.preferences.keys).union(screen.handlers.keys) {
                let memory = screen.handlers[key]?.memory.map { (received: $0.received, decision: $0.decision) }
                entry.context.restorePreference(named: key, received: screen.preferences[key], memory: memory)
            }
        }
        return session
    }

    /// A session right after its `session.created` event.
    static func created(
        root: ScreenResource, schema json: JSONValue, session id: SessionID, at date: Date
    ) throws(CorruptSessionError) -> LiveSession {
        let record = SessionRecord(
            id: id, version: 1, state: .active, schemaJSON: "", tokenHash: "", createdAt: date, updatedAt: date)
        let session = LiveSession(record: record, schema: try schema(json, session: id))
        try session.pushScreen(ScreenSeed(root))
        return session
    }

    private static func schema(_ json: JSONValue, session id: SessionID) throws(CorruptSessionError) -> SessionSchema {
        do {
            return try SessionSchema(json: json)
        } catch {
            throw CorruptSessionError(session: id, reason: "invalid schema: \(error.detail)")
        }
    }
}
