import NavigationValues

/// The one request that changes a stack's screens above its root, as a path binding sends it
/// (`RemoteTree.Stack.setPath(_:)`, `setRoutes(_:)`, `RemoteStack.setPath(_:)`).
public enum PathOperation: Sendable, Equatable {
    /// `POST …/pop {"to"}`: pop every screen above this one.
    case pop(to: ScreenReference)
    /// `POST …/push`.
    case push(ScreenSeed)
    /// `PUT …/path`: every screen above the root replaced in one step.
    case replacePath([ScreenSeed])
    /// `PUT …/screens/{screen}/above`: every screen above this one replaced in one step; it keeps
    /// its id, values and handlers, as do the screens below it.
    case replaceAbove(ScreenReference, [ScreenSeed])
}

/// The one request that turns a stack's screens above its root into `target`, never recreating a
/// screen that stays: the screens above the root that already match the start of `target` are
/// kept, with their values, handlers and received preferences, as SwiftUI keeps the views of a
/// `NavigationStack` path's unchanged prefix. Then, with K the last screen kept (or the root):
///
/// - nothing to change: no request;
/// - only screens to pop: one pop to K;
/// - only one screen to push: one push;
/// - otherwise, K the root: one path replace; K above it: one replace of the screens above K.
///
/// Each is one request and one event, and names the screens it keeps by id, so a change another
/// client made meanwhile is not undone (the last request to arrive wins).
///
/// ```swift
/// PathPlan.operation(root: .root, from: [(a, "Inbox"), (b, "Message")], to: [("Inbox", seed), ("Reply", reply)])
/// // .replaceAbove(.id(a), [reply])
/// ```
enum PathPlan {
    /// `root` names the stack's root (`.root` for the main stack, its id for another stack);
    /// screens match when their keys are equal (their names, or the app's routes).
    static func operation<Key: Equatable>(
        root: ScreenReference, from current: [(id: ScreenID, key: Key)], to target: [(key: Key, seed: ScreenSeed)]
    ) -> PathOperation? {
        var kept = 0
        while kept < current.count, kept < target.count, current[kept].key == target[kept].key { kept += 1 }
        let pops = current.count > kept
        let pushes = target[kept...].map(\.seed)
        let anchor = kept == 0 ? root : .id(current[kept - 1].id)
        switch (pops, pushes.count) {
        case (false, 0): return nil
        case (true, 0): return .pop(to: anchor)
        case (false, 1): return .push(pushes[0])
        default: return kept == 0 ? .replacePath(pushes) : .replaceAbove(anchor, pushes)
        }
    }
}
