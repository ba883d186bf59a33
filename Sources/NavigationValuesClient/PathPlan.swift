import NavigationValues

/// One request that changes a session's stack, as `RemoteStack.setPath(_:)` sends it.
public enum PathOperation: Sendable, Equatable {
    /// `POST …/pop {"to"}`: pop every screen above this one.
    case pop(to: ScreenReference)
    /// `POST …/push`.
    case push(ScreenSeed)
    /// `PUT …/path`: every screen above the root replaced in one step.
    case replacePath([ScreenSeed])
}

/// The fewest requests that turn the screens above the root into `target`, never recreating a
/// screen that stays: the screens above the root that already match the start of `target` (by
/// name) are kept, with their values, handlers and received preferences, as SwiftUI keeps the
/// views of a `NavigationStack` path's unchanged prefix. Then:
///
/// - with a screen kept: one pop to the last kept screen (when anything is above it), then one push
///   per new screen;
/// - with none kept: nothing, one pop to the root, or one push, when that is all it takes;
///   otherwise one path replace, which pops and pushes in a single step.
///
/// ```swift
/// PathPlan.operations(from: [(a, "Inbox"), (b, "Message")], to: [ScreenSeed("Inbox"), ScreenSeed("Reply")])
/// // [.pop(to: .id(a)), .push(ScreenSeed("Reply"))]
/// ```
enum PathPlan {
    static func operations(from current: [(id: ScreenID, name: String)], to target: [ScreenSeed]) -> [PathOperation] {
        var kept = 0
        while kept < current.count, kept < target.count, current[kept].name == target[kept].name { kept += 1 }
        let popsNeeded = current.count > kept
        let pushes = target[kept...].map(PathOperation.push)
        if kept == 0, (popsNeeded ? 1 : 0) + pushes.count > 1 {
            return [.replacePath(target)]
        }
        var operations: [PathOperation] = []
        if popsNeeded { operations.append(.pop(to: kept == 0 ? .root : .id(current[kept - 1].id))) }
        return operations + pushes
    }
}
