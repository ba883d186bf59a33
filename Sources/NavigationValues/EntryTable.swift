/// A screen's local entries (key → value), in the order they were first written. Screens hold a
/// few values each, so a short array searched in order is both smaller and faster than a
/// dictionary; past `smallLimit` entries the table switches to a dictionary so that a screen with
/// many values stays fast.
///
/// One word in its context: the storage is an enum of single native references (a dictionary,
/// whose reference has no spare bits for the case, is boxed). A screen whose
/// entries are all named JSON values (every screen of the server) keeps them as `(name, value)`
/// pairs, 40 bytes each, instead of an `EntryID` and an `Any` existential, 56 bytes each; the
/// first typed key (or a named entry holding anything but a `JSONValue`) turns the pairs into the
/// general form, in the same order.
struct EntryTable: Sequence {
    typealias Element = (key: EntryID, value: Any)

    static let smallLimit = 8

    /// A named entry holding a JSON value.
    struct NamedEntry {
        var name: String
        var value: JSONValue
    }

    private enum Storage {
        /// Named JSON values only (the empty table too: an empty array allocates nothing).
        case named([NamedEntry])
        /// Any entries, typed or named.
        case mixed([Element])
        /// More than `smallLimit` entries.
        case large(LargeTable)
    }

    /// The dictionary of a large table, boxed; copied before a change when shared (value semantics).
    final class LargeTable {
        var table: [EntryID: Any]
        init(_ table: [EntryID: Any]) { self.table = table }
    }

    private var storage: Storage = .named([])

    var isEmpty: Bool {
        switch storage {
        case .named(let entries): entries.isEmpty
        case .mixed(let entries): entries.isEmpty
        case .large(let box): box.table.isEmpty
        }
    }

    var count: Int {
        switch storage {
        case .named(let entries): entries.count
        case .mixed(let entries): entries.count
        case .large(let box): box.table.count
        }
    }

    var keys: [EntryID] {
        switch storage {
        case .named(let entries): entries.map { .name($0.name) }
        case .mixed(let entries): entries.map(\.key)
        case .large(let box): Array(box.table.keys)
        }
    }

    subscript(id: EntryID) -> Any? {
        get {
            switch storage {
            case .named(let entries):
                guard case .name(let name) = id else { return nil }
                for entry in entries where entry.name == name { return entry.value }
                return nil
            case .mixed(let entries):
                for entry in entries where entry.key == id { return entry.value }
                return nil
            case .large(let box):
                return box.table[id]
            }
        }
        set {
            switch storage {
            case .named(var entries):
                guard case .name(let name) = id, newValue == nil || newValue is JSONValue else {
                    storage = .mixed(entries.map { (key: .name($0.name), value: $0.value as Any) })
                    self[id] = newValue
                    return
                }
                // Released first, so that the array is changed in place rather than copied.
                storage = .named([])
                if let index = entries.firstIndex(where: { $0.name == name }) {
                    if let json = newValue as? JSONValue { entries[index].value = json } else { entries.remove(at: index) }
                    storage = .named(entries)
                    return
                }
                guard let json = newValue as? JSONValue else {
                    storage = .named(entries)
                    return
                }
                if entries.count < Self.smallLimit {
                    // Grow by one: a screen's few values take exactly the room they need.
                    entries.reserveCapacity(entries.count + 1)
                    entries.append(NamedEntry(name: name, value: json))
                    storage = .named(entries)
                } else {
                    var table = Dictionary(
                        entries.map { (EntryID.name($0.name), $0.value as Any) }, uniquingKeysWith: { _, last in last })
                    table[id] = json
                    storage = .large(LargeTable(table))
                }
            case .mixed(var entries):
                storage = .named([])
                if let index = entries.firstIndex(where: { $0.key == id }) {
                    if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
                    storage = .mixed(entries)
                    return
                }
                guard let newValue else {
                    storage = .mixed(entries)
                    return
                }
                if entries.count < Self.smallLimit {
                    entries.reserveCapacity(entries.count + 1)
                    entries.append((id, newValue))
                    storage = .mixed(entries)
                } else {
                    var table = Dictionary(entries.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
                    table[id] = newValue
                    storage = .large(LargeTable(table))
                }
            case .large(var box):
                storage = .named([])
                if !isKnownUniquelyReferenced(&box) { box = LargeTable(box.table) }
                box.table[id] = newValue
                storage = .large(box)
            }
        }
    }

    /// Walks the entries without boxing an iterator (no allocation per walk).
    enum Iterator: IteratorProtocol {
        case named(IndexingIterator<[NamedEntry]>)
        case mixed(IndexingIterator<[Element]>)
        case large(Dictionary<EntryID, Any>.Iterator)

        mutating func next() -> Element? {
            switch self {
            case .named(var iterator):
                let next = iterator.next()
                self = .named(iterator)
                return next.map { (key: .name($0.name), value: $0.value) }
            case .mixed(var iterator):
                let next = iterator.next()
                self = .mixed(iterator)
                return next
            case .large(var iterator):
                let next = iterator.next()
                self = .large(iterator)
                return next.map { (key: $0.key, value: $0.value) }
            }
        }
    }

    func makeIterator() -> Iterator {
        switch storage {
        case .named(let entries): .named(entries.makeIterator())
        case .mixed(let entries): .mixed(entries.makeIterator())
        case .large(let box): .large(box.table.makeIterator())
        }
    }
}
