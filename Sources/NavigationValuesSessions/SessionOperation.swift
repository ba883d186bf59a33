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
/// share one `LiveSession.apply`. The main stack is a stack like the others (`StackID.main`).
enum SessionOperation {
    /// A push onto a stack.
    case push(StackID, ScreenSeed)
    /// The screens to pop from a stack, topmost first.
    case pop(StackID, [ScreenID])
    /// A stack's screens above its root replaced.
    case replacePath(StackID, popped: [ScreenID], pushed: [ScreenSeed])
    case updateValues(screen: ScreenID, set: [String: JSONValue], removed: [String])
    case setHandler(screen: ScreenID, key: String, passBack: Bool)
    case removeHandler(screen: ScreenID, key: String)
    case publish(screen: ScreenID, key: String, value: JSONValue)
    case end(purge: Bool)

    // MARK: Several stacks (docs/Stacks.md)

    case createStack(StackID, root: ScreenSeed)
    case selectStack(StackID)
    case removeStack(StackID)
    /// A tab moved to `position` among the tabs.
    case moveStack(StackID, position: Int)
    case present(StackID, style: PresentationStyle, presenter: ScreenID, root: ScreenSeed)
    case dismiss(StackID)
    /// The screens above `screen` in its stack (`popped`, topmost first) replaced by `pushed`.
    case replaceAbove(screen: ScreenID, popped: [ScreenID], pushed: [ScreenSeed])
    /// A publish from `screen`, then `screen` dismissed as SwiftUI's `dismiss` does (popped, or its
    /// presentation dismissed when it is a presentation's root).
    case returnResult(screen: ScreenID, key: String, value: JSONValue)
    /// Several operations applied in order as one change.
    case batch([SessionOperation])

    var isPurge: Bool {
        if case .end(purge: true) = self { true } else { false }
    }

    /// The operation a stored event records; nil for `sessionCreated`, which makes a session
    /// rather than changing one.
    /// A stored event that cannot be an operation (a `stack.created` without its root, say) gives
    /// nil too, which replay reports as damage.
    init?(replaying event: SessionEvent) {
        switch event {
        case .sessionCreated:
            return nil
        case .screenPushed(let screen):
            self = .push(.main, ScreenSeed(screen))
        case .stackScreenPushed(let stack, let screen):
            self = .push(stack, ScreenSeed(screen))
        case .screensPopped(let ids):
            self = .pop(.main, ids)
        case .stackScreensPopped(let stack, let ids, _):
            self = .pop(stack, ids)
        case .pathReplaced(let popped, let pushed):
            self = .replacePath(.main, popped: popped, pushed: pushed.map(ScreenSeed.init))
        case .stackPathReplaced(let stack, let popped, let pushed, _):
            self = .replacePath(stack, popped: popped, pushed: pushed.map(ScreenSeed.init))
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
        case .stackCreated(let stack):
            guard let root = stack.screens.first else { return nil }
            self = .createStack(stack.id, root: ScreenSeed(root))
        case .stackSelected(let id):
            self = .selectStack(id)
        case .stackRemoved(let id, _, _, _):
            self = .removeStack(id)
        case .stackMoved(let id, let position):
            self = .moveStack(id, position: position)
        case .stackPresented(let stack):
            guard let style = stack.kind.presentationStyle, let presenter = stack.presenter,
                let root = stack.screens.first
            else { return nil }
            self = .present(stack.id, style: style, presenter: presenter, root: ScreenSeed(root))
        case .stackDismissed(let id, _, _):
            self = .dismiss(id)
        case .screensReplaced(_, let screen, let popped, let pushed, _):
            self = .replaceAbove(screen: screen, popped: popped, pushed: pushed.map(ScreenSeed.init))
        case .screenReturned(let screen, let key, let value, _, _, _, _, _):
            self = .returnResult(screen: screen, key: key, value: value)
        case .batchApplied(let events):
            var operations: [SessionOperation] = []
            for event in events {
                guard let operation = SessionOperation(replaying: event) else { return nil }
                operations.append(operation)
            }
            self = .batch(operations)
        }
    }
}
