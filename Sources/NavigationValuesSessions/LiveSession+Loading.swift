import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// Stored data that cannot be turned back into a session: a bug or a damaged database, never a
/// client's doing.
struct CorruptSessionError: Error, CustomStringConvertible {
    var session: SessionID
    var reason: String
    var description: String { "session \(session.rawValue) cannot be loaded: \(reason)" }
}

extension LiveSession {
    // MARK: - From the state tables

    /// Rebuilds a session from its stored rows (the live path after a restart).
    static func load(_ stored: StoredSession) throws -> LiveSession {
        let id = stored.record.id
        func parse(_ text: String) throws -> JSONValue {
            do { return try JSONValue(parsing: text) } catch {
                throw CorruptSessionError(session: id, reason: "invalid JSON \(error)")
            }
        }
        let schema: SessionSchema
        do {
            schema = try SessionSchema(json: try parse(stored.record.schemaJSON))
        } catch let error as APIError {
            throw CorruptSessionError(session: id, reason: "invalid schema: \(error.detail)")
        }
        let session = LiveSession(record: stored.record, schema: schema)
        for screen in stored.screens.sorted(by: { $0.record.index < $1.record.index }) {
            var values: [String: JSONValue] = [:]
            for (name, text) in screen.values { values[name] = try parse(text) }
            let entry = session.pushScreen(ScreenSeed(id: screen.record.id, name: screen.record.name, values: values))
            for (name, handler) in screen.handlers {
                entry.context.setPreferenceHandler(named: name, passBack: handler.passBack)
            }
            var names = Set(screen.preferences.keys)
            names.formUnion(screen.handlers.keys)
            for name in names {
                let received = try screen.preferences[name].map(parse)
                var memory: (received: JSONValue, decision: PreferenceDecision)?
                if let handler = screen.handlers[name], let last = handler.lastValueJSON {
                    let decision: PreferenceDecision =
                        try handler.lastPassedJSON.map { .passedBack(try parse($0)) } ?? .stopped
                    memory = (try parse(last), decision)
                }
                entry.context.restorePreference(named: name, received: received, memory: memory)
            }
        }
        return session
    }

    // MARK: - From a snapshot (replay)

    /// Rebuilds a session from `renderSession(includeMemory: true)` output.
    static func load(snapshot json: JSONValue, session id: SessionID) throws -> LiveSession {
        func fail(_ reason: String) -> CorruptSessionError { CorruptSessionError(session: id, reason: reason) }
        guard let version = json["version"]?.integerValue,
            let stateName = json["state"]?.stringValue, let state = SessionState(rawValue: stateName),
            let created = json["createdAt"]?.stringValue.flatMap(Timestamp.date(from:)),
            let updated = json["updatedAt"]?.stringValue.flatMap(Timestamp.date(from:)),
            let screens = json["screens"]?.arrayValue
        else { throw fail("snapshot lacks its header fields") }
        let schema: SessionSchema
        do { schema = try SessionSchema(json: json["schema"] ?? [:]) } catch { throw fail("invalid schema in snapshot") }
        let record = SessionRecord(
            id: id, version: version, state: state, schemaJSON: schema.json.serialized(), tokenHash: "",
            createdAt: created, updatedAt: updated)
        let session = LiveSession(record: record, schema: schema)
        for screen in screens {
            guard let screenID = screen["id"]?.stringValue, let name = screen["name"]?.stringValue else {
                throw fail("snapshot screen lacks its id or name")
            }
            let entry = session.pushScreen(
                ScreenSeed(id: ScreenID(screenID), name: name, values: screen["values"]?.objectValue ?? [:]))
            let received = screen["preferences"]?.objectValue ?? [:]
            let handlers = screen["handlers"]?.objectValue ?? [:]
            for (key, handler) in handlers {
                entry.context.setPreferenceHandler(named: key, passBack: handler["passBack"]?.boolValue ?? false)
            }
            for key in Set(received.keys).union(handlers.keys) {
                var memory: (received: JSONValue, decision: PreferenceDecision)?
                if let handler = handlers[key], let last = handler["lastReceived"] {
                    let passed = handler["lastPassed"] ?? .null
                    memory = (last, handler["lastDecision"] == "passed" ? .passedBack(passed) : .stopped)
                }
                entry.context.restorePreference(named: key, received: received[key], memory: memory)
            }
        }
        return session
    }

    // MARK: - Events back into operations

    /// The operation a stored event records, or nil for `session.created` (handled by the caller).
    static func operation(fromEvent event: JSONValue, session id: SessionID) throws -> Operation? {
        func fail(_ reason: String) -> CorruptSessionError { CorruptSessionError(session: id, reason: reason) }
        func seed(_ json: JSONValue) throws -> ScreenSeed {
            guard let screenID = json["id"]?.stringValue, let name = json["name"]?.stringValue else {
                throw fail("event screen lacks its id or name")
            }
            return ScreenSeed(id: ScreenID(screenID), name: name, values: json["values"]?.objectValue ?? [:])
        }
        func ids(_ json: JSONValue?) -> [ScreenID] {
            (json?.arrayValue ?? []).compactMap { $0.stringValue.map { ScreenID($0) } }
        }
        let screen = event["screen"]?.stringValue.map { ScreenID($0) }
        let key = event["key"]?.stringValue
        switch event["type"]?.stringValue {
        case "session.created":
            return nil
        case "screen.pushed":
            guard let json = event["screen"] else { throw fail("screen.pushed without a screen") }
            return .push(try seed(json))
        case "screens.popped":
            return .pop(ids(event["screens"]))
        case "path.replaced":
            return .replacePath(popped: ids(event["popped"]), pushed: try (event["pushed"]?.arrayValue ?? []).map(seed))
        case "values.updated":
            guard let screen else { throw fail("values.updated without a screen") }
            let removed = (event["removed"]?.arrayValue ?? []).compactMap(\.stringValue)
            return .updateValues(screen: screen, set: event["set"]?.objectValue ?? [:], removed: removed)
        case "handler.set":
            guard let screen, let key, let passBack = event["passBack"]?.boolValue else {
                throw fail("handler.set lacks a field")
            }
            return .setHandler(screen: screen, key: key, passBack: passBack)
        case "handler.removed":
            guard let screen, let key else { throw fail("handler.removed lacks a field") }
            return .removeHandler(screen: screen, key: key)
        case "preference.published":
            guard let screen, let key, let value = event["value"] else { throw fail("preference.published lacks a field") }
            return .publish(screen: screen, key: key, value: value)
        case "session.ended":
            return .end(purge: false)
        default:
            throw fail("unknown event type")
        }
    }
}
