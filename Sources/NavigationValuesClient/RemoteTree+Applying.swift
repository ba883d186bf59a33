import Foundation
import NavigationValues
import NavigationValuesWire

// Applying the server's events to the mirror's core tree. Each event is applied as the core change
// it records (a push, a pop, a dismissal, a selection…), so the tree's rules (a popped presenter
// dismisses what it presents, a removed tab that was selected selects the main stack…) are the
// core's; what the core did is then checked against what the event says the server did, built with
// the same Wire constructors the server builds its events with. Values go through `setValue` and
// `removeValue` (so exactly the screens whose resolved value changed are told, docs/SEMANTICS.md §2, and
// the server's `affected` list checks it), handlers with their decision, and each delivery of a
// publish is recorded as the server made it (docs/SEMANTICS.md §3: the walk happened on the server; it
// is not walked again).

extension RemoteTree {
    /// Replaces the whole mirror with a snapshot. A snapshot that does not fit a tree (never one
    /// of the server's) leaves what part of it fits.
    func rebuild(from session: SessionResource) {
        for id in screenTree.stackIDs.reversed() { screenTree.stack(id)?.context.detach() }
        screenTree = ScreenTree<String>()
        schemaJSON = session.schema
        schema = (try? SchemaResource(json: session.schema)) ?? SchemaResource()
        keys = SchemaValueKeys(schema: schema)
        try? screenTree.load(session, keys: keys)
        version = session.version
        state = session.state
        createdAt = session.createdAt
        updatedAt = session.updatedAt
        origin = session.origin
        refresh()
    }

    /// Applies one change of an event (a batch applies each of its changes in turn); false when it
    /// does not fit the mirror: the tree refuses it, or it did something else there than the event
    /// says it did on the server.
    func apply(_ event: SessionEvent, seq: Int64, at: Date) -> Bool {
        do {
            return try applyChange(event, seq: seq, at: at)
        } catch {
            return false
        }
    }

    private func applyChange(_ event: SessionEvent, seq: Int64, at: Date) throws(NavigationError) -> Bool {
        switch event {
        case .sessionCreated(let root, let schema):
            rebuild(
                from: SessionResource(
                    id: session.id, version: seq, state: .active, createdAt: at, updatedAt: at, schema: schema,
                    screens: [root]))
            return true
        case .screenPushed(let screen):
            return try push(screen, onto: .main, event)
        case .stackScreenPushed(let stack, let screen):
            return try push(screen, onto: stack, event)
        case .screensPopped(let screens):
            return try replace(screens, with: [], on: .main, event)
        case .stackScreensPopped(let stack, let screens, _):
            return try replace(screens, with: [], on: stack, event)
        case .pathReplaced(let popped, let pushed):
            return try replace(popped, with: pushed, on: .main, event)
        case .stackPathReplaced(let stack, let popped, let pushed, _),
            .screensReplaced(let stack, _, let popped, let pushed, _):
            return try replace(popped, with: pushed, on: stack, event)
        case .valuesUpdated(let id, let set, let removed, let affected):
            return updateValues(of: id, set: set, removed: removed, affected: affected)
        case .handlerSet(let id, let key, let passBack):
            guard let context = screenTree[id: id] else { return false }
            context.setPreferenceHandler(named: key, passBack: passBack)
            return true
        case .handlerRemoved(let id, let key):
            guard let context = screenTree[id: id] else { return false }
            context.removePreferenceHandler(named: key)
            return true
        case .preferencePublished(_, let key, _, let deliveries, _):
            return record(deliveries, of: key)
        case .sessionEnded:
            state = .ended
            return true
        case .stackCreated(let stack):
            guard stack.kind == .tab else { return false }
            try screenTree.add(stack, keys: keys)
            structureChanged = true
            return true
        case .stackPresented(let stack):
            guard stack.kind.isPresentation else { return false }
            try screenTree.add(stack, keys: keys)
            structureChanged = true
            return true
        case .stackSelected(let id):
            try screenTree.select(id)
            structureChanged = true
            return true
        case .stackMoved(let id, let position):
            try screenTree.moveTab(id, to: position)
            structureChanged = true
            return true
        case .stackRemoved(let id, let screens, let dismissed, let selected):
            let removal = try screenTree.removeStack(id)
            structureChanged = true
            return removal.screens == screens && removal.dismissed == dismissed
                && screenTree.selectedStackID == selected
        case .stackDismissed(let id, let screens, let dismissed):
            let removal = try screenTree.dismiss(id)
            structureChanged = true
            return removal.screens == screens && removal.dismissed == dismissed
        case .screenReturned(let screen, let key, let value, let deliveries, let stoppedAt, _, _, _):
            guard record(deliveries, of: key) else { return false }
            let removal = try screenTree.dismiss(screen: screen)
            structureChanged = true
            return SessionEvent.returned(
                screen, key: key, value: value, deliveries: deliveries, stoppedAt: stoppedAt, removal: removal)
                == event
        case .batchApplied(let events):
            for step in events {
                guard try applyChange(step, seq: seq, at: at) else { return false }
            }
            return true
        }
    }

    /// A screen pushed onto a stack: the event must be the one the server makes for that push.
    private func push(_ screen: ScreenResource, onto stack: StackID, _ event: SessionEvent) throws(NavigationError)
        -> Bool
    {
        guard SessionEvent.pushed(screen, onto: stack) == event else { return false }
        try screenTree.push(screen, onto: stack, keys: keys)
        structureChanged = true
        return true
    }

    /// `popped` (which must be a stack's topmost screens above its root, topmost first) popped,
    /// dismissing what they present, then `pushed` pushed: a pop, a path replaced, or the screens
    /// above one replaced. The event must be the one the server makes for what the core did.
    private func replace(
        _ popped: [ScreenID], with pushed: [ScreenResource], on stack: StackID, _ event: SessionEvent
    ) throws(NavigationError) -> Bool {
        guard let screens = screenTree.stack(stack), popped.count < screens.count,
            popped.elementsEqual(screens.ids.reversed().prefix(popped.count))
        else { return false }
        let removal = try screenTree.pop(count: popped.count, from: stack)
        structureChanged = true
        for screen in pushed { try screenTree.push(screen, onto: stack, keys: keys) }
        let expected: SessionEvent
        switch event {
        case .screensReplaced(_, let above, _, _, _):
            guard screenTree.stack(stack)?.ids.dropLast(pushed.count).last == above else { return false }
            expected = .screensReplaced(
                stack: stack, screen: above, popped: removal.screens, pushed: pushed, dismissed: removal.dismissed)
        case .pathReplaced, .stackPathReplaced:
            expected = .replacedPath(of: stack, popped: removal.screens, pushed: pushed, dismissed: removal.dismissed)
        default:
            expected = .popped(removal.screens, from: stack, dismissed: removal.dismissed)
        }
        return expected == event
    }

    /// Values written on one screen: the core tells exactly the screens whose resolved value
    /// changed, which must be the ones the server listed in `affected`.
    private func updateValues(
        of id: ScreenID, set: [String: JSONValue], removed: [String], affected: [AffectedValue]
    ) -> Bool {
        guard let context = screenTree[id: id] else { return false }
        var changed: [(ScreenContext, String)] = []
        for name in set.keys.sorted() {
            if let value = set[name] { changed += context.setValue(value, for: keys.key(name)).map { ($0, name) } }
        }
        for name in removed.sorted() { changed += context.removeValue(for: keys.key(name)).map { ($0, name) } }
        var expected: Set<String> = []
        for (context, name) in changed {
            guard let id = screenTree.id(of: context) else { return false }
            expected.insert("\(id.rawValue)/\(name)")
        }
        return expected == Set(affected.map { "\($0.screen.rawValue)/\($0.key)" })
    }

    /// Records a publish's deliveries as the server made them. False when one names an unknown screen.
    func record(_ deliveries: [PreferenceDelivery], of key: String) -> Bool {
        let contexts = deliveries.map { screenTree[id: $0.screen] }
        guard !contexts.contains(where: { $0 == nil }) else { return false }
        for (context, delivery) in zip(contexts, deliveries) {
            context?.recordReceivedPreference(named: key, value: delivery.value)
        }
        return true
    }

    /// Brings the observed stacks, their screens, the selection and the visible screen in line
    /// with the core tree after a change of its structure; only what differs is assigned, so only
    /// its observers are told.
    func refresh() {
        structureChanged = false
        var seen: Set<StackID> = []
        func object(_ id: StackID) -> Stack {
            seen.insert(id)
            let kind = screenTree.kind(of: id) ?? .tab
            let presenter = screenTree.presenter(of: id)
            if let existing = stackObjects[id], existing.kind == kind, existing.presenter == presenter {
                existing.update(from: screenTree.stack(id), keys: keys, session: session)
                return existing
            }
            let created = Stack(id: id, kind: kind, presenter: presenter)
            created.tree = self
            created.update(from: screenTree.stack(id), keys: keys, session: session)
            stackObjects[id] = created
            return created
        }
        let tabs = screenTree.tabIDs.map(object)
        let presentations = screenTree.presentationIDs.map(object)
        for id in stackObjects.keys where !seen.contains(id) { stackObjects[id] = nil }
        if !tabs.elementsEqual(self.tabs, by: ===) { self.tabs = tabs }
        if !presentations.elementsEqual(self.presentations, by: ===) { self.presentations = presentations }
        if selectedStackID != screenTree.selectedStackID { selectedStackID = screenTree.selectedStackID }
        if visibleScreenID != screenTree.visibleScreenID { visibleScreenID = screenTree.visibleScreenID }
    }
}

extension RemoteTree.Stack {
    /// `screens` from the core stack, when its screens changed.
    func update(from stack: ScreenStack<String>?, keys: SchemaValueKeys, session: RemoteSession) {
        let entries = stack?.entries ?? []
        // The same contexts, not only the same ids: a new snapshot makes new contexts.
        guard !entries.elementsEqual(screens, by: { $0.id == $1.id && $0.context === $1.context }) else { return }
        screens = entries.map {
            RemoteTree.Screen(id: $0.id, name: $0.element, stack: id, context: $0.context, keys: keys, session: session)
        }
    }
}
