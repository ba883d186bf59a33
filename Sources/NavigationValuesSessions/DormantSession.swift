import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

/// A loaded session outside the hot set, kept in one byte buffer: exactly what
/// `LiveSession.load(_:)` rebuilds a session from (its stored rows: the record, every stack and
/// screen with its values, handlers, their memory and received preferences), plus the one number
/// the rows do not give back (the position the next stack takes); its schema stays the derived
/// object it was (one shared by every session without a schema). A request to it rebuilds the
/// full session from the buffer, in memory, without reading the store.
///
/// A session with state that the stored form does not hold stays full instead (the actor's
/// `mustStayHot`): so a rebuilt session is the session that was put away, and every read and
/// change behaves as it would have on it.
///
/// A session of five screens with three small values each takes about 570 bytes here; with its
/// actor, about 1,200 per session resident, where its full form takes about 3,700 (`api-bench`).
struct DormantSession: Sendable {
    /// The encoded form (`Writer`'s layout, read back by `Reader`).
    let bytes: [UInt8]
    /// The session's version when it was put away (a shared store's notice is compared with it).
    let version: Int64
    /// The session's schema as it was derived (shared by every session without one): kept as is
    /// rather than as text, so a rebuild neither stores nor parses it again.
    let schema: SchemaInfo

    /// The compact form of `session`. Whether it may be put away is `SessionActor`'s rule
    /// (`mustStayHot`), which asks `LiveSession.hasStateBeyondItsRows`.
    init(_ session: LiveSession) {
        version = session.record.version
        schema = session.schemaInfo
        bytes = Self.encode(session)
    }

    /// A form as it was encoded (tests read damaged ones).
    init(bytes: [UInt8], version: Int64, schema: SchemaInfo) {
        self.bytes = bytes
        self.version = version
        self.schema = schema
    }

    /// Bytes the buffer holds (without the allocation's own header).
    var byteCount: Int { bytes.count }

    /// The session rebuilt, as `LiveSession.load` rebuilds it from its rows. Throws
    /// `CorruptSessionError` when the buffer does not read back (a bug: the caller then loads the
    /// session from the store).
    func session(id: SessionID) throws(CorruptSessionError) -> LiveSession {
        var reader = Reader(bytes: bytes, session: id)
        let stored = try reader.storedSession(id: id)
        let nextStackPosition = try reader.int()
        guard reader.isAtEnd else { throw reader.damaged("trailing bytes") }
        let session = try LiveSession.load(stored, schema: schema)
        session.nextStackPosition = nextStackPosition
        return session
    }

    // MARK: - Writing

    private static func encode(_ session: LiveSession) -> [UInt8] {
        var writer = Writer()
        let record = session.record
        writer.int64(record.version)
        writer.string(record.state.rawValue)
        writer.double(record.createdAt.timeIntervalSince1970)
        writer.double(record.updatedAt.timeIntervalSince1970)
        writer.int64(record.compactedSeq)
        writer.optional(record.origin) { writer, origin in
            writer.string(origin.session.rawValue)
            writer.int64(origin.version)
        }
        writer.optional(session.tokenDigest) { writer, digest in writer.string(digest.hex) }
        writer.string(session.tree.selectedStackID.rawValue)
        let tree = session.tree
        let others = Array(tree.stackIDs.dropFirst())
        writer.int(others.count)
        for (order, id) in others.enumerated() {
            let kind = tree.kind(of: id) ?? .tab
            writer.string(id.rawValue)
            writer.string(kind.rawValue)
            // A tab's position is its own (the tabs' order); a presentation's only orders it
            // after the tabs, as the store's rows do.
            writer.int(kind == .tab ? session.tabPositions[id] ?? order + 1 : order + 1)
            writer.optional(tree.presenter(of: id)) { writer, presenter in writer.string(presenter.rawValue) }
        }
        let screens = tree.stackIDs.flatMap { stackID in
            (tree.stack(stackID)?.entries ?? []).enumerated().map { (stackID, $0.offset, $0.element) }
        }
        writer.int(screens.count)
        for (stackID, index, entry) in screens {
            let context = entry.context
            writer.string(stackID.rawValue)
            writer.string(entry.id.rawValue)
            writer.int(index)
            writer.string(entry.element)
            writer.string(context.role.rawValue)
            writer.members(context.localNamedValues)
            let handlers = context.namedPreferenceHandlerKeys
            writer.int(handlers.count)
            for name in handlers {
                writer.string(name)
                writer.bool(context.preferenceHandlerPassesBack(named: name) ?? false)
                let memory = context.preferenceMemory(named: name)
                writer.optional(memory) { writer, memory in writer.string(memory.received.serialized()) }
                var passed: JSONValue?
                if case .passedBack(let value) = memory?.decision { passed = value }
                writer.optional(passed) { writer, value in writer.string(value.serialized()) }
            }
            writer.members(context.receivedNamedPreferences)
        }
        writer.int(session.nextStackPosition)
        // Exactly as many bytes as written: the writer's array grew by doubling.
        return [UInt8](unsafeUninitializedCapacity: writer.bytes.count) { buffer, count in
            count = buffer.initialize(fromContentsOf: writer.bytes)
        }
    }

    private struct Writer {
        var bytes: [UInt8] = []

        mutating func int(_ value: Int) { int64(Int64(value)) }

        /// Zigzag, then seven bits a byte, low first.
        mutating func int64(_ value: Int64) {
            var rest = UInt64(bitPattern: (value << 1) ^ (value >> 63))
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }

        mutating func double(_ value: Double) { bytes.appendBigEndian(value.bitPattern) }

        mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

        mutating func string(_ value: String) {
            var value = value
            value.withUTF8 { utf8 in
                int(utf8.count)
                bytes.append(contentsOf: utf8)
            }
        }

        mutating func optional<T>(_ value: T?, _ write: (inout Writer, T) -> Void) {
            guard let value else { return bool(false) }
            bool(true)
            write(&self, value)
        }

        /// Named JSON values as (name, JSON text) pairs, by name.
        mutating func members(_ members: [String: JSONValue]) {
            int(members.count)
            for name in members.keys.sorted() {
                string(name)
                string(members[name]?.serialized() ?? "null")
            }
        }
    }

    // MARK: - Reading

    private struct Reader {
        let bytes: [UInt8]
        let session: SessionID
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        func damaged(_ what: String) -> CorruptSessionError {
            CorruptSessionError(session: session, reason: "its compact form does not read back: \(what)")
        }

        mutating func byte() throws(CorruptSessionError) -> UInt8 {
            guard offset < bytes.count else { throw damaged("it ends early") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func int64() throws(CorruptSessionError) -> Int64 {
            var raw: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let byte = try byte()
                guard shift < 64 else { throw damaged("a number is too long") }
                raw |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { break }
                shift += 7
            }
            return Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1)
        }

        mutating func int() throws(CorruptSessionError) -> Int {
            let value = try int64()
            guard let int = Int(exactly: value) else { throw damaged("a number is out of range") }
            return int
        }

        mutating func count() throws(CorruptSessionError) -> Int {
            let value = try int()
            guard value >= 0, value <= bytes.count - offset else { throw damaged("a count is out of range") }
            return value
        }

        mutating func double() throws(CorruptSessionError) -> Double {
            guard bytes.count - offset >= 8 else { throw damaged("it ends early") }
            defer { offset += 8 }
            return Double(bitPattern: UInt64(bigEndianBytes: bytes[offset..<offset + 8]))
        }

        mutating func bool() throws(CorruptSessionError) -> Bool {
            switch try byte() {
            case 0: return false
            case 1: return true
            default: throw damaged("a flag is neither 0 nor 1")
            }
        }

        mutating func string() throws(CorruptSessionError) -> String {
            let count = try count()
            defer { offset += count }
            return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
        }

        mutating func optional<T>(
            _ read: (inout Reader) throws(CorruptSessionError) -> T
        ) throws(CorruptSessionError) -> T? {
            try bool() ? try read(&self) : nil
        }

        mutating func members() throws(CorruptSessionError) -> [String: String] {
            var members: [String: String] = [:]
            for _ in 0..<(try count()) { members[try string()] = try string() }
            return members
        }

        mutating func storedSession(id: SessionID) throws(CorruptSessionError) -> StoredSession {
            let version = try int64()
            guard let state = SessionState(rawValue: try string()) else { throw damaged("an unknown state") }
            let createdAt = Date(timeIntervalSince1970: try double())
            let updatedAt = Date(timeIntervalSince1970: try double())
            let compactedSeq = try int64()
            let origin = try optional { (reader: inout Reader) throws(CorruptSessionError) in
                SessionOrigin(session: SessionID(try reader.string()), version: try reader.int64())
            }
            let tokenHash = try optional { (reader: inout Reader) throws(CorruptSessionError) in try reader.string() }
            let selected = StackID(try string())
            var stacks: [StackRecord] = []
            for _ in 0..<(try count()) {
                let stackID = StackID(try string())
                guard let kind = StackKind(rawValue: try string()) else { throw damaged("an unknown stack kind") }
                let position = try int()
                let presenter = try optional { (reader: inout Reader) throws(CorruptSessionError) in
                    ScreenID(try reader.string())
                }
                stacks.append(StackRecord(id: stackID, session: id, position: position, kind: kind, presenter: presenter))
            }
            var screens: [StoredScreen] = []
            for _ in 0..<(try count()) {
                let stack = StackID(try string())
                let screenID = ScreenID(try string())
                let index = try int()
                let name = try string()
                let role = try string()
                let values = try members()
                var handlers: [String: HandlerRecord] = [:]
                for _ in 0..<(try count()) {
                    let key = try string()
                    let passBack = try bool()
                    let last = try optional { (reader: inout Reader) throws(CorruptSessionError) in try reader.string() }
                    let passed = try optional { (reader: inout Reader) throws(CorruptSessionError) in
                        try reader.string()
                    }
                    handlers[key] = HandlerRecord(passBack: passBack, lastValueJSON: last, lastPassedJSON: passed)
                }
                let preferences = try members()
                let record = ScreenRecord(
                    id: screenID, session: id, index: index, name: name, role: role,
                    previous: screens.last.flatMap { $0.record.stack == stack ? $0.record.id : nil }, stack: stack)
                screens.append(
                    StoredScreen(record: record, values: values, handlers: handlers, preferences: preferences))
            }
            let record = SessionRecord(
                id: id, version: version, state: state, schemaJSON: "",
                tokenHash: tokenHash ?? "", createdAt: createdAt, updatedAt: updatedAt, origin: origin,
                compactedSeq: compactedSeq)
            return StoredSession(record: record, screens: screens, stacks: stacks, selectedStack: selected)
        }
    }
}

extension LiveSession {
    /// Whether the session holds state its rows (and so its compact form) do not: a screen that
    /// keeps the walk that brought it a preference in this process (what `?explain` shows of
    /// it). A reload from the store loses it too, so such a session stays in its full form.
    var hasStateBeyondItsRows: Bool {
        for stackID in tree.stackIDs {
            for entry in tree.stack(stackID)?.entries ?? [] where entry.context.hasPreferenceArrivals {
                return true
            }
        }
        return false
    }
}
