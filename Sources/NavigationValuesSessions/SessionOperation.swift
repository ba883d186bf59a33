import NavigationValues
import NavigationValuesWire

/// A screen as an operation carries it: id, name and the values it is pushed with.
struct ScreenSeed: Equatable {
    var id: ScreenID
    var name: String
    var values: [String: JSONValue]

    init(id: ScreenID, name: String, values: [String: JSONValue]) {
        self.id = id
        self.name = name
        self.values = values
    }

    /// The screen as an event shows it: only what it was pushed with is kept (its resolved
    /// values and links are recomputed when the event is applied again).
    init(_ screen: ScreenResource) {
        self.init(id: screen.id, name: screen.name, values: screen.values)
    }
}

/// A change to a session, checked and ready to apply. Live requests become operations through
/// `CommandValidator`; replay turns stored events back into the same operations, so both paths
/// share one `LiveSession.apply`.
enum SessionOperation {
    case push(ScreenSeed)
    /// The screens to pop, topmost first.
    case pop([ScreenID])
    case replacePath(popped: [ScreenID], pushed: [ScreenSeed])
    case updateValues(screen: ScreenID, set: [String: JSONValue], removed: [String])
    case setHandler(screen: ScreenID, key: String, passBack: Bool)
    case removeHandler(screen: ScreenID, key: String)
    case publish(screen: ScreenID, key: String, value: JSONValue)
    case end(purge: Bool)

    var isPurge: Bool {
        if case .end(purge: true) = self { true } else { false }
    }

    /// The operation a stored event records; nil for `sessionCreated`, which makes a session
    /// rather than changing one.
    init?(replaying event: SessionEvent) {
        switch event {
        case .sessionCreated:
            return nil
        case .screenPushed(let screen):
            self = .push(ScreenSeed(screen))
        case .screensPopped(let ids):
            self = .pop(ids)
        case .pathReplaced(let popped, let pushed):
            self = .replacePath(popped: popped, pushed: pushed.map(ScreenSeed.init))
        case .valuesUpdated(let screen, let set, let removed, _):
            self = .updateValues(screen: screen, set: set, removed: removed)
        case .handlerSet(let screen, let key, let passBack):
            self = .setHandler(screen: screen, key: key, passBack: passBack)
        case .handlerRemoved(let screen, let key):
            self = .removeHandler(screen: screen, key: key)
        case .preferencePublished(let screen, let key, let value, _, _):
            self = .publish(screen: screen, key: key, value: value)
        case .sessionEnded:
            self = .end(purge: false)
        }
    }
}
