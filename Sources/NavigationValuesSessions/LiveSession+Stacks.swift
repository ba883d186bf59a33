import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

// The changes of a session's stacks (docs/Stacks.md), applied through the core `ScreenTree`, each
// with its event and the rows it writes. A change that touches only the main stack keeps API.md's
// event types (`screen.pushed`, `screens.popped`, `path.replaced`), so that a client that knows
// only those keeps an exact picture of the main stack; a change that touches another stack, or
// dismisses a presentation, has a type of its own.

extension LiveSession {
    func applyStackOperation(_ operation: SessionOperation) throws(CorruptSessionError) -> Applied {
        switch operation {
        case .createStack(let id, let root):
            return try applyCreateStack(id, root: root)
        case .selectStack(let id):
            try change("select stack '\(id)'") { () throws(NavigationError) in try tree.select(id) }
            return Applied(event: .stackSelected(id), changes: [.selectStack(record.id, id)])
        case .removeStack(let id):
            let wasSelected = tree.selectedStackID == id
            let removal = try change("remove stack '\(id)'") { () throws(NavigationError) in try tree.removeStack(id) }
            var changes = removalChanges(removal)
            if wasSelected { changes.append(.selectStack(record.id, tree.selectedStackID)) }
            return Applied(
                event: .stackRemoved(
                    stack: id, screens: removal.screens, dismissed: removal.dismissed, selected: tree.selectedStackID),
                changes: changes)
        case .present(let id, let style, let presenter, let root):
            return try applyPresent(id, style: style, presenter: presenter, root: root)
        case .dismiss(let id):
            let removal = try change("dismiss '\(id)'") { () throws(NavigationError) in try tree.dismiss(id) }
            return Applied(
                event: .stackDismissed(stack: id, screens: removal.screens, dismissed: removal.dismissed),
                changes: removalChanges(removal))
        case .pushOnto(let stack, let seed):
            return try applyPush(seed, onto: stack)
        case .popFrom(let stack, let ids):
            return try applyPop(ids, from: stack)
        case .replacePathOf(let stack, let popped, let pushed):
            return try applyReplacePath(popped: popped, pushed: pushed, of: stack)
        case .replaceAbove(let screen, let popped, let pushed):
            return try applyReplaceAbove(screen, popped: popped, pushed: pushed)
        case .returnResult(let screen, let key, let value):
            return try applyReturn(screen, key: key, value: value)
        case .batch(let operations):
            var events: [SessionEvent] = []
            var changes: [StateChange] = []
            for operation in operations {
                let step = try applyStep(operation)
                events.append(step.event)
                changes += step.changes
            }
            return Applied(event: .batchApplied(events), changes: changes)
        default:
            throw corrupt("operation \(operation) is not a change of several stacks")
        }
    }

    // MARK: - Pushing and popping on any stack

    func applyPush(_ seed: ScreenSeed, onto stack: StackID) throws(CorruptSessionError) -> Applied {
        let entry = try pushScreen(seed, onto: stack)
        let screen = resource(of: entry)
        return Applied(
            event: stack == .main ? .screenPushed(screen) : .stackScreenPushed(stack: stack, screen: screen),
            changes: insertChanges(for: entry, seed: seed, on: stack))
    }

    func applyPop(_ ids: [ScreenID], from stack: StackID) throws(CorruptSessionError) -> Applied {
        let removal = try popScreens(ids, from: stack)
        let event: SessionEvent =
            stack == .main && removal.dismissed.isEmpty
            ? .screensPopped(ids) : .stackScreensPopped(stack: stack, screens: ids, dismissed: removal.dismissed)
        return Applied(event: event, changes: removalChanges(removal))
    }

    func applyReplacePath(
        popped: [ScreenID], pushed: [ScreenSeed], of stack: StackID
    ) throws(CorruptSessionError) -> Applied {
        let removal = try popScreens(popped, from: stack)
        var changes = removalChanges(removal)
        var resources: [ScreenResource] = []
        for seed in pushed {
            let entry = try pushScreen(seed, onto: stack)
            resources.append(resource(of: entry))
            changes += insertChanges(for: entry, seed: seed, on: stack)
        }
        let event: SessionEvent =
            stack == .main && removal.dismissed.isEmpty
            ? .pathReplaced(popped: popped, pushed: resources)
            : .stackPathReplaced(stack: stack, popped: popped, pushed: resources, dismissed: removal.dismissed)
        return Applied(event: event, changes: changes)
    }

    private func applyReplaceAbove(
        _ screen: ScreenID, popped: [ScreenID], pushed: [ScreenSeed]
    ) throws(CorruptSessionError) -> Applied {
        guard let stack = tree.stackID(containing: screen), let screens = tree.stack(stack),
            let index = screens.index(of: screen), screens.ids[(index + 1)...].reversed().elementsEqual(popped)
        else { throw corrupt("screens \(popped.map(\.rawValue)) are not the ones above \(screen.rawValue)") }
        let removal = try popScreens(popped, from: stack)
        var changes = removalChanges(removal)
        var resources: [ScreenResource] = []
        for seed in pushed {
            let entry = try pushScreen(seed, onto: stack)
            resources.append(resource(of: entry))
            changes += insertChanges(for: entry, seed: seed, on: stack)
        }
        return Applied(
            event: .screensReplaced(
                stack: stack, screen: screen, popped: popped, pushed: resources, dismissed: removal.dismissed),
            changes: changes)
    }

    /// Publishes, then dismisses the publishing screen (SEMANTICS.md §3 for the walk; docs/Stacks.md §5).
    private func applyReturn(_ screen: ScreenID, key: String, value: JSONValue) throws(CorruptSessionError) -> Applied {
        let published = try publish(screen, key: key, value: value)
        guard case .preferencePublished(_, _, _, let deliveries, let stoppedAt) = published.event else {
            throw corrupt("a publish gave \(published.event.kind.rawValue)")
        }
        let removal = try change("dismiss screen \(screen.rawValue)") { () throws(NavigationError) in
            try tree.dismiss(screen: screen)
        }
        let dismissed = removal.dismissed + (removal.isStackRemoved ? [removal.stack] : [])
        return Applied(
            event: .screenReturned(
                screen: screen, key: key, value: value, deliveries: deliveries, stoppedAt: stoppedAt,
                stack: removal.stack, popped: removal.screens, dismissed: dismissed),
            changes: published.changes + removalChanges(removal))
    }

    // MARK: - Tabs and presentations

    private func applyCreateStack(_ id: StackID, root: ScreenSeed) throws(CorruptSessionError) -> Applied {
        try change("add stack '\(id)'") { () throws(NavigationError) in
            try tree.addStack(id, root: root.name, rootID: root.id)
        }
        return try applyNewStack(id, kind: .tab, presenter: nil, root: root)
    }

    private func applyPresent(
        _ id: StackID, style: PresentationStyle, presenter: ScreenID, root: ScreenSeed
    ) throws(CorruptSessionError) -> Applied {
        try change("present '\(id)'") { () throws(NavigationError) in
            try tree.present(style, from: presenter, id: id, root: root.name, rootID: root.id)
        }
        return try applyNewStack(id, kind: StackKind(style), presenter: presenter, root: root)
    }

    /// A stack just added with its root: the root's values, the event and the rows.
    private func applyNewStack(
        _ id: StackID, kind: StackKind, presenter: ScreenID?, root seed: ScreenSeed
    ) throws(CorruptSessionError) -> Applied {
        guard let stack = tree.stack(id), let entry = stack.entries.first else {
            throw corrupt("stack '\(id)' has no root")
        }
        for (name, value) in seed.values {
            entry.context.setValue(value, for: valueKey(name))
        }
        let position = nextStackPosition
        nextStackPosition += 1
        let changes: [StateChange] =
            [
                .insertStack(
                    StackRecord(id: id, session: record.id, position: position, kind: kind, presenter: presenter))
            ]
            + insertChanges(for: entry, seed: seed, on: id)
        let resource = stackResource(id)
        return Applied(event: kind == .tab ? .stackCreated(resource) : .stackPresented(resource), changes: changes)
    }

    // MARK: - Pieces

    /// The rows of a screen just pushed (the topmost of its stack) with the values it came with.
    func insertChanges(for entry: Screen, seed: ScreenSeed, on stackID: StackID) -> [StateChange] {
        let entries = tree.stack(stackID)?.entries ?? []
        let index = max(entries.count - 1, 0)
        let previous = index > 0 ? entries[index - 1].id : tree.presenter(of: stackID)
        var changes: [StateChange] = [
            .insertScreen(
                ScreenRecord(
                    id: entry.id, session: record.id, index: index, name: entry.element,
                    role: entry.context.role.rawValue, previous: previous, stack: stackID))
        ]
        for name in seed.values.keys.sorted() {
            if let value = seed.values[name] {
                changes.append(.setValue(entry.id, key: name, json: value.serialized()))
            }
        }
        return changes
    }

    /// Pops the given screens, topmost first, from a stack; they must be its topmost ones, above
    /// its root. What they present is dismissed.
    private func popScreens(_ ids: [ScreenID], from stackID: StackID) throws(CorruptSessionError) -> TreeRemoval {
        guard let stack = tree.stack(stackID), ids.count < stack.count,
            ids.elementsEqual(stack.entries.reversed().prefix(ids.count).lazy.map { $0.id })
        else {
            throw corrupt(
                "popped screens \(ids.map(\.rawValue)) are not the topmost ones above the root of '\(stackID)'")
        }
        return try change("pop from '\(stackID)'") { () throws(NavigationError) in
            try tree.pop(count: ids.count, from: stackID)
        }
    }

    /// The rows a removal deletes: the stacks that left (before their screens, which they link to),
    /// then every screen that left.
    private func removalChanges(_ removal: TreeRemoval) -> [StateChange] {
        var stacks = removal.dismissed
        if removal.isStackRemoved { stacks.append(removal.stack) }
        var changes: [StateChange] = []
        if !stacks.isEmpty { changes.append(.deleteStacks(record.id, stacks)) }
        if !removal.allScreens.isEmpty { changes.append(.deleteScreens(removal.allScreens)) }
        return changes
    }

    /// Runs a change of the tree that validation has checked; a refusal means the stored history
    /// does not fit (or our bug).
    @discardableResult
    private func change<T>(_ what: String, _ body: () throws(NavigationError) -> T) throws(CorruptSessionError) -> T {
        do {
            return try body()
        } catch {
            throw corrupt("cannot \(what): \(error.message)")
        }
    }
}
