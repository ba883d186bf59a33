import Foundation
import NavigationValues

// The JSON text of what every mutation writes (its event, as stored and sent, and its answer),
// written straight to bytes with `JSONWriter` instead of through a `JSONValue` tree: the same
// text as `json.serialized()`, byte for byte (a test compares the two for every event and answer
// kind). The changes of the main stack's screens, of values and of handlers, which most
// mutations are, are written member by member, names in the sorted order `serialized()` gives
// them; rarer kinds go through their tree.

extension ScreenResource {
    /// `json`, written to `writer`.
    package func write(to writer: inout JSONWriter) {
        writer.beginObject()
        if let explanation {
            writer.key("explanation")
            writer.value(explanation.json)
        }
        writer.key("handlers")
        if handlers.count <= 1 {
            writer.beginObject()
            if let (key, handler) = handlers.first {
                writer.key(named: key)
                handler.write(to: &writer)
            }
            writer.endObject()
        } else {
            writer.object(handlers.mapValues(\.json))
        }
        writer.key("id")
        writer.string(id.rawValue)
        writer.key("index")
        writer.integer(Int64(index))
        writer.key("name")
        writer.string(name)
        writer.key("next")
        writer.string(next?.rawValue)
        writer.key("preferences")
        writer.object(preferences)
        writer.key("previous")
        writer.string(previous?.rawValue)
        writer.key("resolved")
        writer.object(resolved)
        writer.key("role")
        writer.string(role.rawValue)
        writer.key("values")
        writer.object(values)
        writer.endObject()
    }
}

extension HandlerResource {
    /// `json`, written to `writer`.
    fileprivate func write(to writer: inout JSONWriter) {
        writer.beginObject()
        if let memory {
            switch memory.decision {
            case .passedBack(let passed):
                writer.key("lastDecision")
                writer.string("passed")
                writer.key("lastPassed")
                writer.value(passed)
            case .stopped:
                writer.key("lastDecision")
                writer.string("stopped")
            }
            writer.key("lastReceived")
            writer.value(memory.received)
        }
        writer.key("passBack")
        writer.bool(passBack)
        writer.endObject()
    }
}

extension RecordedEvent {
    /// `json` (with `session`: `json(taggedWith:)`) as its text's UTF-8 bytes: what the log stores
    /// and a stream sends.
    package func serializedBytes(taggedWith session: SessionID? = nil) -> [UInt8] {
        var writer = JSONWriter()
        // Each kind's members, `seq`, `at`, `type` and (tagged) `session` among them, in sorted order.
        func seqAndSession() {
            writer.key("seq")
            writer.integer(seq)
            if let session {
                writer.key("session")
                writer.string(session.rawValue)
            }
        }
        func type() {
            writer.key("type")
            writer.string(event.kind.rawValue)
            writer.endObject()
        }
        func writeAt() {
            writer.key("at")
            writer.value { output in
                output.append(UInt8(ascii: "\""))
                Timestamp.write(at, to: &output)
                output.append(UInt8(ascii: "\""))
            }
        }
        writer.beginObject()
        switch event {
        case .screenPushed(let screen):
            writeAt()
            writer.key("screen")
            screen.write(to: &writer)
            seqAndSession()
            type()
        case .screensPopped(let screens):
            writeAt()
            writer.key("screens")
            writer.ids(screens)
            seqAndSession()
            type()
        case .stackScreenPushed(let stack, let screen):
            writeAt()
            writer.key("screen")
            screen.write(to: &writer)
            seqAndSession()
            writer.key("stack")
            writer.string(stack.rawValue)
            type()
        case .stackScreensPopped(let stack, let screens, let dismissed):
            writeAt()
            writer.key("dismissed")
            writer.ids(dismissed)
            writer.key("screens")
            writer.ids(screens)
            seqAndSession()
            writer.key("stack")
            writer.string(stack.rawValue)
            type()
        case .valuesUpdated(let screen, let set, let removed, let affected):
            writer.key("affected")
            writer.beginArray()
            for value in affected { value.write(to: &writer) }
            writer.endArray()
            writeAt()
            writer.key("removed")
            writer.strings(removed)
            writer.key("screen")
            writer.string(screen.rawValue)
            seqAndSession()
            writer.key("set")
            writer.object(set)
            type()
        case .handlerSet(let screen, let key, let passBack):
            writeAt()
            writer.key("key")
            writer.string(key)
            writer.key("passBack")
            writer.bool(passBack)
            writer.key("screen")
            writer.string(screen.rawValue)
            seqAndSession()
            type()
        case .handlerRemoved(let screen, let key):
            writeAt()
            writer.key("key")
            writer.string(key)
            writer.key("screen")
            writer.string(screen.rawValue)
            seqAndSession()
            type()
        default:
            let tree = session.map { json(taggedWith: $0) } ?? json
            return tree.serializedBytes()
        }
        return writer.bytes
    }
}

extension AffectedValue {
    fileprivate func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.key("key")
        writer.string(key)
        writer.key("screen")
        writer.string(screen.rawValue)
        writer.key("value")
        writer.value(value)
        writer.endObject()
    }
}

extension MutationResult {
    /// `json` as its text's UTF-8 bytes (the answer's body); nil for `.ended` (204, no body).
    package func serializedBytes() -> [UInt8]? {
        var writer = JSONWriter()
        writer.beginObject()
        switch self {
        case .pushed(let screen, _), .handlerSet(let screen, _):
            writer.key("screen")
            screen.write(to: &writer)
        case .popped(let popped, _):
            writer.key("popped")
            writer.ids(popped)
        case .valuesUpdated(let screen, let affected, _):
            writer.key("affected")
            writer.beginArray()
            for value in affected { value.write(to: &writer) }
            writer.endArray()
            writer.key("screen")
            screen.write(to: &writer)
        case .handlerRemoved:
            break
        case .stackPopped(let stack, let popped, let dismissed, _):
            writer.key("dismissed")
            writer.ids(dismissed)
            writer.key("popped")
            writer.ids(popped)
            writer.key("stack")
            writer.string(stack.rawValue)
        case .ended:
            return nil
        default:
            return json?.serializedBytes()
        }
        writer.key("version")
        writer.integer(version)
        writer.endObject()
        return writer.bytes
    }
}

extension JSONWriter {
    /// An array of screen ids (a loop: a key path's map is built at run time on every use).
    fileprivate mutating func ids(_ ids: [ScreenID]) {
        beginArray()
        for id in ids { string(id.rawValue) }
        endArray()
    }

    /// An array of stack ids.
    fileprivate mutating func ids(_ ids: [StackID]) {
        beginArray()
        for id in ids { string(id.rawValue) }
        endArray()
    }
}
