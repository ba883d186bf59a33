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

/// `POST …/stacks` (a tab added) and `POST …/present` (a stack presented): the stack with its root.
public struct StackResult: Sendable, Equatable {
    /// The stack as it is after the change.
    public var stack: StackResource
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(stack: StackResource, version: Int64) {
        self.stack = stack
        self.version = version
    }
}

/// `POST …/select`: the selected stack and the screen a user now sees.
public struct SelectResult: Sendable, Equatable {
    /// `main` or a tab.
    public var selectedStack: StackID
    /// The screen a user sees now.
    public var visibleScreen: ScreenID?
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(selectedStack: StackID, visibleScreen: ScreenID?, version: Int64) {
        self.selectedStack = selectedStack
        self.visibleScreen = visibleScreen
        self.version = version
    }
}

/// `DELETE …/stacks/{stack}` and `POST …/dismiss`: the stack that left, its screens (topmost
/// first), the presentations that left with it, and for a removed tab the stack selected after.
public struct StackRemovalResult: Sendable, Equatable {
    /// The tab removed or the presentation dismissed.
    public var stack: StackID
    /// Its screens, topmost first.
    public var screens: [ScreenID]
    /// The presentations dismissed with it.
    public var dismissed: [StackID]
    /// For a removed tab, the stack selected after; nil for a dismissed presentation.
    public var selectedStack: StackID?
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(stack: StackID, screens: [ScreenID], dismissed: [StackID], selectedStack: StackID?, version: Int64) {
        self.stack = stack
        self.screens = screens
        self.dismissed = dismissed
        self.selectedStack = selectedStack
        self.version = version
    }
}

/// `POST …/stacks/{stack}/pop`: the screens popped from the stack, topmost first, and the
/// presentations dismissed with them.
public struct StackPopResult: Sendable, Equatable {
    /// The stack popped.
    public var stack: StackID
    /// The popped screens, topmost first.
    public var popped: [ScreenID]
    /// The presentations dismissed with them.
    public var dismissed: [StackID]
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(stack: StackID, popped: [ScreenID], dismissed: [StackID], version: Int64) {
        self.stack = stack
        self.popped = popped
        self.dismissed = dismissed
        self.version = version
    }
}

/// `PUT …/stacks/{stack}/path`: the screens popped (topmost first), the ones pushed in their place,
/// and the presentations dismissed with the popped ones.
public struct StackPathResult: Sendable, Equatable {
    /// The stack whose path was replaced.
    public var stack: StackID
    /// The popped screens, topmost first.
    public var popped: [ScreenID]
    /// The screens pushed in their place, bottom first.
    public var pushed: [ScreenResource]
    /// The presentations dismissed with the popped screens.
    public var dismissed: [StackID]
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(stack: StackID, popped: [ScreenID], pushed: [ScreenResource], dismissed: [StackID], version: Int64) {
        self.stack = stack
        self.popped = popped
        self.pushed = pushed
        self.dismissed = dismissed
        self.version = version
    }
}

/// `PUT …/screens/{screen}/above`: the screen as it is now, the screens popped above it (topmost
/// first), the ones pushed in their place, and the presentations dismissed.
public struct ReplaceAboveResult: Sendable, Equatable {
    /// The screen the change kept, as it is now.
    public var screen: ScreenResource
    /// The popped screens, topmost first.
    public var popped: [ScreenID]
    /// The screens pushed above it, bottom first.
    public var pushed: [ScreenResource]
    /// The presentations dismissed with the popped screens.
    public var dismissed: [StackID]
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(
        screen: ScreenResource, popped: [ScreenID], pushed: [ScreenResource], dismissed: [StackID], version: Int64
    ) {
        self.screen = screen
        self.popped = popped
        self.pushed = pushed
        self.dismissed = dismissed
        self.version = version
    }
}

/// `POST …/screens/{screen}/return`: who received the value, where the walk stopped, and what
/// left (the screen popped, or the presentation whose root it was dismissed).
public struct ReturnResult: Sendable, Equatable {
    /// Each screen whose handler received the value, in walk order.
    public var deliveries: [PreferenceDelivery]
    /// The screen that stopped the walk; nil when it went past the root.
    public var stoppedAt: ScreenID?
    /// The stack the screen left.
    public var stack: StackID
    /// The popped screens, topmost first.
    public var popped: [ScreenID]
    /// The presentations dismissed.
    public var dismissed: [StackID]
    /// The session's version after the change.
    public var version: Int64

    /// A result with these members.
    public init(
        deliveries: [PreferenceDelivery], stoppedAt: ScreenID?, stack: StackID, popped: [ScreenID],
        dismissed: [StackID], version: Int64
    ) {
        self.deliveries = deliveries
        self.stoppedAt = stoppedAt
        self.stack = stack
        self.popped = popped
        self.dismissed = dismissed
        self.version = version
    }
}

/// `POST …/batch`: what each operation answered, in order, and the one version the batch made.
public struct BatchResult: Sendable, Equatable {
    /// Each operation's answer, in order (each with the batch's version).
    public var results: [MutationResult]
    /// The session's version after the batch.
    public var version: Int64

    /// A result with these members.
    public init(results: [MutationResult], version: Int64) {
        self.results = results
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

    var stackResult: StackResult? {
        switch self {
        case .stackCreated(let stack, let version), .stackPresented(let stack, let version):
            StackResult(stack: stack, version: version)
        default: nil
        }
    }

    var selectResult: SelectResult? {
        if case .stackSelected(let stack, let visible, let version) = self {
            SelectResult(selectedStack: stack, visibleScreen: visible, version: version)
        } else {
            nil
        }
    }

    var stackRemovalResult: StackRemovalResult? {
        switch self {
        case .stackRemoved(let stack, let screens, let dismissed, let selected, let version):
            StackRemovalResult(
                stack: stack, screens: screens, dismissed: dismissed, selectedStack: selected, version: version)
        case .stackDismissed(let stack, let screens, let dismissed, let version):
            StackRemovalResult(
                stack: stack, screens: screens, dismissed: dismissed, selectedStack: nil, version: version)
        default: nil
        }
    }

    /// A pop of any stack; a pop of the main stack answers as `POST …/pop` does (no stack named).
    var stackPopResult: StackPopResult? {
        switch self {
        case .stackPopped(let stack, let popped, let dismissed, let version):
            StackPopResult(stack: stack, popped: popped, dismissed: dismissed, version: version)
        case .popped(let popped, let version):
            StackPopResult(stack: .main, popped: popped, dismissed: [], version: version)
        default: nil
        }
    }

    /// A path replaced on any stack; on the main stack it answers as `PUT …/path` does.
    var stackPathResult: StackPathResult? {
        switch self {
        case .stackPathReplaced(let stack, let popped, let pushed, let dismissed, let version):
            StackPathResult(stack: stack, popped: popped, pushed: pushed, dismissed: dismissed, version: version)
        case .pathReplaced(let popped, let pushed, let version):
            StackPathResult(stack: .main, popped: popped, pushed: pushed, dismissed: [], version: version)
        default: nil
        }
    }

    var replaceAboveResult: ReplaceAboveResult? {
        if case .screensReplaced(let screen, let popped, let pushed, let dismissed, let version) = self {
            ReplaceAboveResult(screen: screen, popped: popped, pushed: pushed, dismissed: dismissed, version: version)
        } else {
            nil
        }
    }

    var returnResult: ReturnResult? {
        if case .returned(let deliveries, let stoppedAt, let stack, let popped, let dismissed, let version) = self {
            ReturnResult(
                deliveries: deliveries, stoppedAt: stoppedAt, stack: stack, popped: popped, dismissed: dismissed,
                version: version)
        } else {
            nil
        }
    }

    var batchResult: BatchResult? {
        if case .batchApplied(let results, let version) = self {
            BatchResult(results: results, version: version)
        } else {
            nil
        }
    }
}
