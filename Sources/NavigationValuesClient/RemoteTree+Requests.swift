import NavigationValues
import NavigationValuesWire

// The requests the mirror's bindings send, through the session's typed calls (retried, with their
// idempotency keys), each answering the session's version after it.

extension RemoteTree {
    /// Sends one path change of a stack: on the main stack through docs/API.md's endpoints, so its
    /// events keep docs/API.md's types; on another through that stack's.
    func sendPath(_ operation: PathOperation, on stack: StackID) async throws -> Int64 {
        switch (operation, stack == .main) {
        case (.push(let seed), true): try await session.push(seed).version
        case (.pop(let screen), true): try await session.pop(to: screen).version
        case (.replacePath(let seeds), true): try await session.replacePath(seeds).version
        case (.push(let seed), false): try await session.push(seed, onto: stack).version
        case (.pop(let screen), false): try await session.pop(to: screen, from: stack).version
        case (.replacePath(let seeds), false): try await session.replacePath(seeds, of: stack).version
        case (.replaceAbove(let screen, let seeds), _):
            try await session.replaceScreens(above: screen, with: seeds).version
        }
    }

    /// Selects a stack.
    func sendSelect(_ stack: StackID) async throws -> Int64 {
        try await session.selectStack(stack).version
    }

    /// Presents a stack from a screen; with `replacing`, one batch dismisses that presentation
    /// first, so the change is still one request and one event.
    func sendPresent(
        _ root: ScreenSeed, style: PresentationStyle, from screen: ScreenID, replacing: StackID?
    ) async throws -> (StackID, Int64) {
        guard let replacing else {
            let result = try await session.present(root, from: .id(screen), style: style)
            return (result.stack.id, result.version)
        }
        let result = try await session.batch([
            .dismiss(replacing), .present(root, from: .id(screen), style: style),
        ])
        guard case .stackPresented(let stack, _) = result.results.last else {
            throw RemoteError(
                .invalidResponse, request: "POST batch", detail: "the batch did not answer a presentation")
        }
        return (stack.id, result.version)
    }

    /// Dismisses a presentation.
    func sendDismiss(_ stack: StackID) async throws -> Int64 {
        try await session.dismiss(stack).version
    }
}
