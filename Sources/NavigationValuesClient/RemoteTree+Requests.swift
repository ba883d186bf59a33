import NavigationValues
import NavigationValuesWire

// The requests the mirror's bindings send, each answering the session's version after it.

extension RemoteTree {
    /// Sends one path change of a stack.
    func sendPath(_ operation: PathOperation, on stack: StackID) async throws -> Int64 {
        let stackPath = ["stacks", stack.rawValue]
        switch (operation, stack == .main) {
        case (.push(let seed), true):
            return try await session.push(seed).version
        case (.pop(let screen), true):
            return try await session.pop(to: screen).version
        case (.replacePath(let seeds), true):
            return try await session.replacePath(seeds).version
        case (.push(let seed), false):
            return try await mutate("POST", stackPath + ["push"], seed.json, .pushed)
        case (.pop(let screen), false):
            return try await mutate("POST", stackPath + ["pop"], ["to": .string(screen.description)], .stackPopped)
        case (.replacePath(let seeds), false):
            return try await mutate(
                "PUT", stackPath + ["path"], ["screens": .array(seeds.map(\.json))], .stackPathReplaced)
        case (.replaceAbove(let screen, let seeds), _):
            return try await mutate(
                "PUT", ["screens", screen.description, "above"], ["screens": .array(seeds.map(\.json))],
                .screensReplaced)
        }
    }

    /// Selects a stack.
    func sendSelect(_ stack: StackID) async throws -> Int64 {
        try await mutate("POST", ["select"], ["stack": .string(stack.rawValue)], .stackSelected)
    }

    /// Presents a stack from a screen, dismissing `replacing` first.
    func sendPresent(
        _ root: ScreenSeed, style: PresentationStyle, from screen: ScreenID, replacing: StackID?
    ) async throws -> (StackID, Int64) {
        if let replacing { _ = try await sendDismiss(replacing) }
        let body: JSONValue = ["from": .string(screen.rawValue), "style": .string(style.rawValue), "root": root.json]
        return try await Self.present(body, on: session)
    }

    private nonisolated static func present(_ body: JSONValue, on session: RemoteSession) async throws
        -> (StackID, Int64)
    {
        try await session.mutate("POST", session.path("present"), body, .stackPresented, nil, nil) { result in
            guard case .stackPresented(let stack, let version) = result else { return nil }
            return (stack.id, version)
        }
    }

    /// Dismisses a presentation.
    func sendDismiss(_ stack: StackID) async throws -> Int64 {
        try await mutate("POST", ["dismiss"], ["stack": .string(stack.rawValue)], .stackDismissed)
    }

    private func mutate(_ method: String, _ segments: [String], _ body: JSONValue, _ kind: MutationResult.Kind)
        async throws -> Int64
    {
        try await Self.mutate(method, segments, body, kind, on: session)
    }

    private nonisolated static func mutate(
        _ method: String, _ segments: [String], _ body: JSONValue, _ kind: MutationResult.Kind,
        on session: RemoteSession
    ) async throws -> Int64 {
        let path = HTTPTransport.path(["v1", "sessions", session.id.rawValue] + segments)
        return try await session.mutate(method, path, body, kind, nil, nil) { $0.version }
    }
}
