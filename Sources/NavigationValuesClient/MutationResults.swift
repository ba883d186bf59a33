import NavigationValues
import NavigationValuesWire

// What each mutation answers, typed per call (docs/API.md, Endpoints). Each carries the session's new
// `version`, which a mirror can wait for (`RemoteStack.sync(to:)`) and a later call can send as
// `ifMatch`.

/// `POST …/push`: the new screen.
public struct PushResult: Sendable, Equatable {
    /// The screen as it is after the change.
    public var screen: ScreenResource
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(screen: ScreenResource, version: Int64) {
        self.screen = screen
        self.version = version
    }
}

/// `POST …/pop`: the popped screens, topmost first.
public struct PopResult: Sendable, Equatable {
    /// The popped screens, topmost first.
    public var popped: [ScreenID]
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(popped: [ScreenID], version: Int64) {
        self.popped = popped
        self.version = version
    }
}

/// `PUT …/path`: the screens popped (topmost first) and the ones pushed in their place.
public struct PathResult: Sendable, Equatable {
    /// The popped screens, topmost first.
    public var popped: [ScreenID]
    /// The screens pushed in their place, bottom first.
    public var pushed: [ScreenResource]
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(popped: [ScreenID], pushed: [ScreenResource], version: Int64) {
        self.popped = popped
        self.pushed = pushed
        self.version = version
    }
}

/// `PATCH …/values`: the screen as it is now, and every resolved value that changed because of it.
public struct ValuesResult: Sendable, Equatable {
    /// The screen as it is after the change.
    public var screen: ScreenResource
    /// Every resolved value that changed, on this screen and the ones that inherit it.
    public var affected: [AffectedValue]
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(screen: ScreenResource, affected: [AffectedValue], version: Int64) {
        self.screen = screen
        self.affected = affected
        self.version = version
    }
}

/// `PUT …/handlers/{key}`: the screen with its new handler.
public struct HandlerResult: Sendable, Equatable {
    /// The screen as it is after the change.
    public var screen: ScreenResource
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(screen: ScreenResource, version: Int64) {
        self.screen = screen
        self.version = version
    }
}

/// `POST …/preferences/{key}`: who received what, and where the walk stopped (nil: past the root).
public struct PublishResult: Sendable, Equatable {
    /// Each screen whose handler received the value, in walk order, with what it received.
    public var deliveries: [PreferenceDelivery]
    /// The screen that stopped the walk; nil when it went past the root.
    public var stoppedAt: ScreenID?
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(deliveries: [PreferenceDelivery], stoppedAt: ScreenID?, version: Int64) {
        self.deliveries = deliveries
        self.stoppedAt = stoppedAt
        self.version = version
    }
}

/// `POST …/stacks/{stack}/move`: the tab and where it is now among the tabs.
public struct StackMoveResult: Sendable, Equatable {
    /// The tab moved.
    public var stack: StackID
    /// Its position among the tabs (0: the first one after the main stack).
    public var position: Int
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(stack: StackID, position: Int, version: Int64) {
        self.stack = stack
        self.position = position
        self.version = version
    }
}

extension MutationResult {
    var pushResult: PushResult? {
        if case .pushed(let screen, let version) = self { PushResult(screen: screen, version: version) } else { nil }
    }

    var popResult: PopResult? {
        if case .popped(let popped, let version) = self { PopResult(popped: popped, version: version) } else { nil }
    }

    var pathResult: PathResult? {
        if case .pathReplaced(let popped, let pushed, let version) = self {
            PathResult(popped: popped, pushed: pushed, version: version)
        } else {
            nil
        }
    }

    var valuesResult: ValuesResult? {
        if case .valuesUpdated(let screen, let affected, let version) = self {
            ValuesResult(screen: screen, affected: affected, version: version)
        } else {
            nil
        }
    }

    var handlerResult: HandlerResult? {
        if case .handlerSet(let screen, let version) = self {
            HandlerResult(screen: screen, version: version)
        } else {
            nil
        }
    }

    var stackMoveResult: StackMoveResult? {
        if case .stackMoved(let stack, let position, let version) = self {
            StackMoveResult(stack: stack, position: position, version: version)
        } else {
            nil
        }
    }

    var publishResult: PublishResult? {
        if case .published(let deliveries, let stoppedAt, let version) = self {
            PublishResult(deliveries: deliveries, stoppedAt: stoppedAt, version: version)
        } else {
            nil
        }
    }
}
