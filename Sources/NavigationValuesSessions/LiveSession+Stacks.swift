import Foundation
import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

// The changes of a session's stacks (docs/Stacks.md), the main one included, applied through the
// core `ScreenTree`, each with its event and the rows it writes. Which type a push, pop or path
// event has (docs/API.md's on the main stack alone, a type naming the stack otherwise) is Wire's rule:
// `SessionEvent.pushed(_:onto:)`, `popped(_:from:dismissed:)`, `replacedPath(of:…)`.

extension LiveSession {
    // MARK: - Pushing and popping on any stack

    func applyPush(_ seed: ScreenSeed, onto stack: StackID) throws(CorruptSessionError) -> Applied {
        let entry = try pushScreen(seed, onto: stack)
        let screen = resource(of: entry)
        return Applied(event: .pushed(screen, onto: stack), changes: insertChanges(for: entry, seed: seed, on: stack))
    }

    func applyPop(_ ids: [ScreenID], from stack: StackID) throws(CorruptSessionError) -> Applied {
        let removal = try popScreens(ids, from: stack)
        return Applied(
            event: .popped(ids, from: stack, dismissed: removal.dismissed), changes: removalChanges(removal))
    }

    func applyReplacePath(
        popped: [ScreenID], pushed: [ScreenSeed], of stack: StackID
    ) throws(CorruptSessionError) -> Applied {
        let replaced = try replaceScreens(popped, with: pushed, on: stack)
        return Applied(
            event: .replacedPath(
                of: stack, popped: popped, pushed: replaced.pushed, dismissed: replaced.removal.dismissed),
            changes: replaced.changes)
    }

    func applyReplaceAbove(
        _ screen: ScreenID, popped: [ScreenID], pushed: [ScreenSeed]
    ) throws(CorruptSessionError) -> Applied {
        guard let stack = tree.stackID(containing: screen), let screens = tree.stack(stack),
            let index = screens.index(of: screen), screens.ids[(index + 1)...].reversed().elementsEqual(popped)
        else { throw corrupt("screens \(popped.map(\.rawValue)) are not the ones above \(screen.rawValue)") }
        let replaced = try replaceScreens(popped, with: pushed, on: stack)
        return Applied(
            event: .screensReplaced(
                stack: stack, screen: screen, popped: popped, pushed: replaced.pushed,
                dismissed: replaced.removal.dismissed),
            changes: replaced.changes)
    }

    /// Pops `popped` (topmost first) from a stack, then pushes `pushed` onto it: what the pop
    /// removed, the pushed screens as they render, and the rows of both.
    private func replaceScreens(
        _ popped: [ScreenID], with pushed: [ScreenSeed], on stack: StackID
    ) throws(CorruptSessionError) -> (removal: TreeRemoval, pushed: [ScreenResource], changes: [StateChange]) {
        let removal = try popScreens(popped, from: stack)
        var changes = removalChanges(removal)
        var resources: [ScreenResource] = []
        for seed in pushed {
            let entry = try pushScreen(seed, onto: stack)
            resources.append(resource(of: entry))
            changes += insertChanges(for: entry, seed: seed, on: stack)
        }
        return (removal, resources, changes)
    }

    /// Publishes, then dismisses the publishing screen (docs/SEMANTICS.md §3 for the walk; docs/Stacks.md §5).
    func applyReturn(_ screen: ScreenID, key: String, value: JSONValue) throws(CorruptSessionError) -> Applied {
        let published = try publish(screen, key: key, value: value)
        guard case .preferencePublished(_, _, _, let deliveries, let stoppedAt) = published.event else {
            throw corrupt("a publish gave \(published.event.kind.rawValue)")
        }
        let removal = try change("dismiss screen \(screen.rawValue)") { () throws(NavigationError) in
            try tree.dismiss(screen: screen)
        }
        return Applied(
            event: .returned(
                screen, key: key, value: value, deliveries: deliveries, stoppedAt: stoppedAt, removal: removal),
            changes: published.changes + removalChanges(removal))
    }

    // MARK: - Tabs and presentations

    func applySelect(_ id: StackID) throws(CorruptSessionError) -> Applied {
        try change("select stack '\(id)'") { () throws(NavigationError) in try tree.select(id) }
        return Applied(event: .stackSelected(id), changes: [.selectStack(record.id, id)])
    }

    func applyRemoveStack(_ id: StackID) throws(CorruptSessionError) -> Applied {
        let wasSelected = tree.selectedStackID == id
        let removal = try change("remove stack '\(id)'") { () throws(NavigationError) in try tree.removeStack(id) }
        tabPositions[id] = nil
        var changes = removalChanges(removal)
        if wasSelected { changes.append(.selectStack(record.id, tree.selectedStackID)) }
        return Applied(
            event: .stackRemoved(
                stack: id, screens: removal.screens, dismissed: removal.dismissed, selected: tree.selectedStackID),
            changes: changes)
    }

    /// Moves a tab among the tabs. The tabs' stored positions keep their order: the tabs take the
    /// positions the tabs held, in their new order, so only the tabs between the old place and the
    /// new one are written.
    func applyMoveStack(_ id: StackID, to position: Int) throws(CorruptSessionError) -> Applied {
        let slots = tree.tabIDs.dropFirst().compactMap { tabPositions[$0] }.sorted()
        try change("move tab '\(id)'") { () throws(NavigationError) in try tree.moveTab(id, to: position) }
        var changes: [StateChange] = []
        for (tab, slot) in zip(tree.tabIDs.dropFirst(), slots) where tabPositions[tab] != slot {
            tabPositions[tab] = slot
            changes.append(.setStackPosition(record.id, tab, position: slot))
        }
        return Applied(event: .stackMoved(stack: id, position: position), changes: changes)
    }

    func applyDismiss(_ id: StackID) throws(CorruptSessionError) -> Applied {
        let removal = try change("dismiss '\(id)'") { () throws(NavigationError) in try tree.dismiss(id) }
        return Applied(
            event: .stackDismissed(stack: id, screens: removal.screens, dismissed: removal.dismissed),
            changes: removalChanges(removal))
    }

    func applyCreateStack(_ id: StackID, root: ScreenSeed) throws(CorruptSessionError) -> Applied {
        try change("add stack '\(id)'") { () throws(NavigationError) in
            try tree.addStack(id, root: root.name, rootID: root.id)
        }
        return try applyNewStack(id, kind: .tab, presenter: nil, root: root)
    }

    func applyPresent(
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
        guard let stack = tree.stack(id), let entry = stack.firstEntry else {
            throw corrupt("stack '\(id)' has no root")
        }
        for (name, value) in seed.values {
            entry.context.setValue(value, for: valueKey(name))
        }
        let position = nextStackPosition
        nextStackPosition += 1
        if kind == .tab { tabPositions[id] = position }
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
        // The screen below it by position, without making every screen of the stack.
        let stack = tree.stack(stackID)
        let index = max((stack?.count ?? 0) - 1, 0)
        let previous = index > 0 ? stack?.entry(at: index - 1).id : tree.presenter(of: stackID)
        var changes: [StateChange] = []
        // Room for the session's row too, which `finish` appends.
        changes.reserveCapacity(2 + seed.values.count)
        changes.append(
            .insertScreen(
                ScreenRecord(
                    id: entry.id, session: record.id, index: index, name: entry.element,
                    role: entry.context.role.rawValue, previous: previous, stack: stackID)))
        // In the names' order; one value (the usual push) needs no sorted copy of the names.
        if seed.values.count == 1, let (name, value) = seed.values.first {
            changes.append(.setValue(entry.id, key: name, json: value.serialized()))
        } else {
            for name in seed.values.keys.sorted() {
                if let value = seed.values[name] {
                    changes.append(.setValue(entry.id, key: name, json: value.serialized()))
                }
            }
        }
        return changes
    }

    /// Pops the given screens, topmost first, from a stack; they must be its topmost ones, above
    /// its root. What they present is dismissed.
    private func popScreens(_ ids: [ScreenID], from stackID: StackID) throws(CorruptSessionError) -> TreeRemoval {
        guard let stack = tree.stack(stackID), ids.count < stack.count,
            stack.hasTopIDs(ids)
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
        changes.reserveCapacity(3)  // the stacks, the screens, and the session's row (`finish`)
        if !stacks.isEmpty { changes.append(.deleteStacks(record.id, stacks)) }
        // Most removals dismiss nothing: their screens are the array the removal holds already.
        let screens = removal.dismissedScreens.isEmpty ? removal.screens : removal.allScreens
        if !screens.isEmpty { changes.append(.deleteScreens(screens)) }
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
