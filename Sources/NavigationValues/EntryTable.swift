/// A screen's local entries (key → value). Screens hold a few values each, so a short array
/// searched in order is both smaller and faster than a dictionary; past `smallLimit` entries the
/// table switches to a dictionary so that a screen with many values stays fast.
struct EntryTable: Sequence {
    typealias Element = (key: EntryID, value: Any)

    static let smallLimit = 8

    private var small: [Element] = []
    private var large: [EntryID: Any]?

    var isEmpty: Bool { large?.isEmpty ?? small.isEmpty }
    var count: Int { large?.count ?? small.count }
    var keys: [EntryID] { large.map { Array($0.keys) } ?? small.map(\.key) }

    subscript(id: EntryID) -> Any? {
        get {
            if let large { return large[id] }
            for entry in small where entry.key == id { return entry.value }
            return nil
        }
        set {
            if large != nil {
                large?[id] = newValue
                return
            }
            if let index = small.firstIndex(where: { $0.key == id }) {
                if let newValue { small[index].value = newValue } else { small.remove(at: index) }
                return
            }
            guard let newValue else { return }
            if small.count < Self.smallLimit {
                // Grow by one: a screen's few values take exactly the room they need.
                small.reserveCapacity(small.count + 1)
                small.append((id, newValue))
            } else {
                var table = Dictionary(small.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
                table[id] = newValue
                large = table
                small = []
            }
        }
    }

    /// Walks the entries without boxing an iterator (no allocation per walk).
    enum Iterator: IteratorProtocol {
        case small(IndexingIterator<[Element]>)
        case large(Dictionary<EntryID, Any>.Iterator)

        mutating func next() -> Element? {
            switch self {
            case .small(var iterator):
                let next = iterator.next()
                self = .small(iterator)
                return next
            case .large(var iterator):
                let next = iterator.next()
                self = .large(iterator)
                return next.map { (key: $0.key, value: $0.value) }
            }
        }
    }

    func makeIterator() -> Iterator {
        if let large { return .large(large.makeIterator()) }
        return .small(small.makeIterator())
    }
}
