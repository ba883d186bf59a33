import Foundation
import NavigationValues
import NavigationValuesWire

// The events of several stacks per session (docs/Stacks.md), as the main stack's mirror sees them:
// what they do to the main stack is applied with the core's rules; the screens of the other stacks
// are only remembered, so that later events naming them are known not to concern the mirror.

extension RemoteStack {
    /// Applies an event of docs/Stacks.md; false when it does not fit the mirror.
    func applyStackEvent(_ event: SessionEvent, seq: Int64, at: Date) -> Bool {
        switch event {
        case .stackCreated(let created), .stackPresented(let created):
            otherScreens.formUnion(created.screens.map(\.id))
        case .stackSelected, .stackMoved:
            break
        case .stackRemoved(_, let screens, _, _), .stackDismissed(_, let screens, _):
            otherScreens.subtract(screens)
        case .stackScreenPushed(let stack, let screen):
            guard stack != .main else { return pushOntoMirror([screen]) }
            otherScreens.insert(screen.id)
        case .stackScreensPopped(let stack, let popped, _):
            return removeFrom(stack, popped: popped, pushed: [])
        case .stackPathReplaced(let stack, let popped, let pushed, _),
            .screensReplaced(let stack, _, let popped, let pushed, _):
            return removeFrom(stack, popped: popped, pushed: pushed)
        case .screenReturned(_, let key, _, let deliveries, _, let stack, let popped, _):
            guard record(deliveries, of: key) else { return false }
            return removeFrom(stack, popped: popped, pushed: [])
        case .batchApplied(let events):
            for event in events {
                guard apply(event, seq: seq, at: at) else { return false }
            }
        default:
            return false
        }
        return true
    }

    /// Pops `popped` (topmost first) from `stack`, then pushes `pushed`: on the mirror for the
    /// main stack, in the remembered screens for another one. (The screens of presentations
    /// dismissed along the way may stay remembered: ids are never reused, so no later event names
    /// them; the next snapshot forgets them.)
    private func removeFrom(_ stack: StackID, popped: [ScreenID], pushed: [ScreenResource]) -> Bool {
        guard stack == .main else {
            otherScreens.subtract(popped)
            otherScreens.formUnion(pushed.map(\.id))
            return true
        }
        guard pop(popped) else { return false }
        return pushOntoMirror(pushed)
    }

    private func pushOntoMirror(_ screens: [ScreenResource]) -> Bool {
        for screen in screens {
            guard self.stack.screen(id: screen.id) == nil else { return false }
            restore(screen, into: self.stack.push(screen.name, id: screen.id))
        }
        refreshScreens()
        return true
    }
}
