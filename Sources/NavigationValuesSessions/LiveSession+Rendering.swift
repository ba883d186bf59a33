import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

// The session, its stacks and its screens as docs/API.md's and docs/Stacks.md's resources: the tree
// renders itself as Wire writes it (`ScreenTree.resources(keys:)`), as a client's mirror does.

extension LiveSession {
    /// One screen, of any stack, as docs/API.md's SCREEN.
    func resource(of entry: Screen, includeMemory: Bool = false) -> ScreenResource {
        tree.resource(of: entry, keys: keys, includeMemory: includeMemory)
    }

    /// The whole session as docs/API.md's session resource, with the stacks of docs/Stacks.md.
    /// `includeMemory` adds each handler's memory, which snapshots need for exact replay.
    func resource(includeMemory: Bool = false) -> SessionResource {
        let (screens, stacks) = tree.resources(keys: keys, includeMemory: includeMemory)
        return SessionResource(
            id: record.id, version: record.version, state: record.state, createdAt: record.createdAt,
            updatedAt: record.updatedAt, schema: schema.json, screens: screens, selectedStack: tree.selectedStackID,
            visibleScreen: visibleScreenID, stacks: stacks,
            origin: record.origin)
    }

    /// One stack as docs/Stacks.md's STACK.
    func stackResource(_ id: StackID) -> StackResource {
        tree.resource(ofStack: id, keys: keys)
    }

    /// Every stack, the main one first, as `GET …/stacks` answers.
    func stackList() -> StackList {
        let session = resource()
        let main = StackResource(id: .main, kind: .main, screens: session.screens)
        return StackList(
            stacks: [main] + session.stacks, selectedStack: session.selectedStack,
            visibleScreen: session.visibleScreen, version: record.version)
    }
}

extension LiveSession: ChangedSession {
    package func screenResource(_ id: ScreenID) -> ScreenResource? {
        tree.screen(id: id).map { resource(of: $0) }
    }

    package var visibleScreenID: ScreenID? { tree.visibleScreenID }
}
