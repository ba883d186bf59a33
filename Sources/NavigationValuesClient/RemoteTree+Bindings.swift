import NavigationValues
import NavigationValuesWire

// The bindings of a mirror, what `NavigationStack(path:)`, `TabView(selection:)`, `.sheet(item:)`
// and `.fullScreenCover(item:)` read and set (the SwiftUI layer only forwards to these): a stack's
// path (screen names, or the app's routes), the selected tab, and what a screen presents. Each
// change is one request and one event. Set through a binding, it reads as set while its request
// flies (SwiftUI does not snap back); a refusal lands in the binding's error and the binding reads
// the server's again. Changes of one binding are sent one after another, each planned against the
// mirror as the one before it left it. The awaited forms (`setPath`, `setRoutes`, `select`,
// `present`, `dismiss`) throw instead, and return once the mirror shows their result.

/// A stack presented by a screen, as a presentation binding reads it (SwiftUI's `.sheet(item:)`,
/// `.fullScreenCover(item:)`).
public struct Presentation: Identifiable, Sendable, Equatable {
    /// The screen presenting it. A screen presents one stack at a time, so this identifies the
    /// presentation for SwiftUI from the moment it is asked for until it is dismissed.
    public var id: ScreenID { presenter }
    /// The screen presenting it.
    public let presenter: ScreenID
    /// A sheet or a full-screen cover.
    public let style: PresentationStyle
    /// Its root screen: as the server has it, or as asked while the request flies.
    public let root: ScreenSeed
    /// The presented stack; nil while the request that presents it flies.
    public let stack: StackID?

    /// A presentation with these members.
    public init(presenter: ScreenID, style: PresentationStyle, root: ScreenSeed, stack: StackID? = nil) {
        self.presenter = presenter
        self.style = style
        self.root = root
        self.stack = stack
    }

    /// Its root as one of the app's routes, if it is one.
    public func route<R: RemoteRoute>(_ type: R.Type) -> R? { R(root) }
}

/// A presentation asked for or dismissed through a binding, while its request flies.
enum PendingPresentation: Equatable {
    case presenting(Presentation)
    case dismissing
}

// MARK: - A stack's path

extension RemoteTree.Stack {
    /// The names of the screens above the root, for `NavigationStack(path:)`. Setting it sends one
    /// request (`PathPlan`), keeping the screens that match the start of the new path by name;
    /// until the mirror shows the result it reads as set. A refusal lands in `pathError`.
    ///
    /// ```swift
    /// NavigationStack(path: $stack.path) {
    ///     HomeView().navigationDestination(for: String.self) { name in ScreenView(name: name) }
    /// }
    /// ```
    public var path: [String] {
        get { pathSeeds.map(\.name) }
        set {
            guard newValue != path else { return }
            let seeds = newValue.map { ScreenSeed($0) }
            request(seeds) { [weak self] in _ = try await self?.setPath(seeds) }
        }
    }

    /// The app's routes of the screens above the root, as `NavigationStack(path:)` holds them: up
    /// to the first screen that is not a route of this type. Reads as set while a change flies.
    public func routes<R: RemoteRoute>(_ type: R.Type) -> [R] {
        var routes: [R] = []
        for seed in pathSeeds {
            guard let route = R(seed) else { break }
            routes.append(route)
        }
        return routes
    }

    /// The screen at this position of the path (0: the first above the root), as the server has
    /// it; nil while the change that pushes it flies. A destination view's screen.
    public func screen(atPathIndex index: Int) -> RemoteTree.Screen? {
        guard index >= 0, index + 1 < screens.count else { return nil }
        let screen = screens[index + 1]
        if let pendingPath, index >= pendingPath.count || pendingPath[index].name != screen.name { return nil }
        return screen
    }

    /// What this stack's topmost screen presents (only that one can present): what a stack view
    /// shows over itself; with `style`, only a presentation of that style.
    public func presentation(style: PresentationStyle? = nil) -> Presentation? {
        guard let top, let tree else { return nil }
        return tree.presentation(presentedBy: top.id, style: style)
    }

    /// What a presentation binding over this stack does when it is set (see
    /// `RemoteTree.setPresentation(_:presentedBy:style:)`), for its topmost screen.
    public func setPresentation(_ value: Presentation?, style: PresentationStyle? = nil) {
        guard let top, let tree else { return }
        tree.setPresentation(value, presentedBy: top.id, style: style)
    }

    /// Makes the screens above the root `target` with one request (`PathPlan`), keeping those that
    /// match its start by name. Returns once the mirror shows the result, with the request sent
    /// (nil when nothing had to change).
    ///
    /// - Throws: `RemoteError` when the server refuses (a screen that presents cannot have screens
    ///   pushed above it: `.conflict`).
    @discardableResult
    public func setPath(_ target: [ScreenSeed]) async throws -> PathOperation? {
        try await change(to: target.map { (key: $0.name, seed: $0) }) { $0.name }
    }

    /// Makes the screens above the root the ones `routes` open, with one request, keeping those
    /// whose route matches the start of `routes`. Returns once the mirror shows the result.
    ///
    /// - Throws: `RemoteError` (`.invalidValue` for a route that cannot be written as JSON).
    @discardableResult
    public func setRoutes<R: RemoteRoute>(_ routes: [R]) async throws -> PathOperation? {
        let target = try routes.map { (key: Optional($0), seed: try $0.screenSeed()) }
        return try await change(to: target) { R($0) }
    }

    /// Sets the path to the screens `routes` open as a binding does: it reads as set at once, one
    /// request follows, and a refusal lands in `pathError`.
    public func requestRoutes<R: RemoteRoute>(_ routes: [R]) {
        guard routes != self.routes(R.self) else { return }
        do {
            let seeds = try routes.map { try $0.screenSeed() }
            request(seeds) { [weak self] in _ = try await self?.setRoutes(routes) }
        } catch {
            pathError = RemoteError(error, request: "path")
        }
    }

    /// The path as it reads: the screens asked for while a change flies, else the server's.
    var pathSeeds: [ScreenSeed] {
        pendingPath ?? screens.dropFirst().map { ScreenSeed($0.name, values: $0.values) }
    }

    /// Plans and sends one path change, then waits for the mirror to show it.
    private func change<Key: Equatable>(
        to target: [(key: Key, seed: ScreenSeed)], key: (RemoteTree.Screen) -> Key
    ) async throws -> PathOperation? {
        guard let tree, let root else {
            throw RemoteError(.notFound, request: "path", detail: "stack '\(id)' is not in the session")
        }
        let current = screens.dropFirst().map { (id: $0.id, key: key($0)) }
        guard
            let operation = PathPlan.operation(
                root: id == .main ? .root : .id(root.id), from: current, to: target)
        else { return nil }
        let version = try await tree.sendPath(operation, on: id)
        try await tree.sync(to: version)
        return operation
    }

    /// Reads as `seeds` until `change` (queued after the changes before it) is done.
    private func request(_ seeds: [ScreenSeed], _ change: @escaping @MainActor () async throws -> Void) {
        pendingPath = seeds
        let previous = pathTask
        pathTask = Task { [weak self] in
            await previous?.value
            do {
                try await change()
                if self?.pendingPath == seeds { self?.pathError = nil }
            } catch {
                self?.pathError = RemoteError(error, request: "path")
            }
            if self?.pendingPath == seeds { self?.pendingPath = nil }
        }
    }
}

// MARK: - The selected tab

extension RemoteTree {
    /// The selected stack (the main stack or a tab), for `TabView(selection:)`: setting it selects
    /// that stack with one request (`POST …/select`), reading as set until the mirror shows it; a
    /// refusal lands in `selectionError`.
    public var selection: StackID {
        get { pendingSelection ?? selectedStackID }
        set { requestSelection(newValue) }
    }

    /// Selects a stack as the `selection` binding does: at once in `selection`, then one request.
    public func requestSelection(_ stack: StackID) {
        guard stack != selection else { return }
        pendingSelection = stack
        let previous = selectionTask
        selectionTask = Task { [weak self] in
            await previous?.value
            do {
                try await self?.select(stack)
                if self?.pendingSelection == stack { self?.selectionError = nil }
            } catch {
                self?.selectionError = RemoteError(error, request: "select")
            }
            if self?.pendingSelection == stack { self?.pendingSelection = nil }
        }
    }

    /// Selects the main stack or a tab (`POST …/select`) and returns once the mirror shows it.
    ///
    /// - Throws: `RemoteError` (`.notFound` for an unknown stack, `.conflict` for a presentation).
    public func select(_ stack: StackID) async throws {
        try await sync(to: try await sendSelect(stack))
    }
}

// MARK: - Presentations

extension RemoteTree {
    /// What the screen with this id presents, as a presentation binding reads it: as asked while a
    /// presentation or dismissal flies, else as the server has it; with `style`, only a
    /// presentation of that style (a `.sheet` and a `.fullScreenCover` binding on the same view).
    public func presentation(presentedBy screen: ScreenID, style: PresentationStyle? = nil) -> Presentation? {
        let presentation: Presentation?
        switch pendingPresentations[screen] {
        case .presenting(let asked): presentation = asked
        case .dismissing: presentation = nil
        case nil:
            presentation = stack(presentedBy: screen).flatMap { stack in
                guard let style = stack.style, let root = stack.root else { return nil }
                return Presentation(
                    presenter: screen, style: style, root: ScreenSeed(root.name, values: root.values), stack: stack.id)
            }
        }
        guard let presentation, style == nil || presentation.style == style else { return nil }
        return presentation
    }

    /// What a presentation binding does when it is set: nil (a user's dismissal: a swipe, a
    /// `dismiss` action) dismisses what the screen presents in that style (in either style when
    /// `style` is nil); a presentation it does not show yet is presented from the screen (replacing
    /// what it presents, if anything).
    public func setPresentation(_ value: Presentation?, presentedBy screen: ScreenID, style: PresentationStyle?) {
        let current = presentation(presentedBy: screen, style: style)
        guard let value else {
            if current != nil { requestDismissal(presentedBy: screen) }
            return
        }
        guard value != current else { return }
        requestPresentation(value.root, style: value.style, from: screen)
    }

    /// Presents a stack from a screen as a binding does: `presentation(presentedBy:)` shows it at
    /// once; one request follows (a dismissal of what the screen presents first, if anything).
    /// A refusal lands in `presentationError`.
    public func requestPresentation(_ root: ScreenSeed, style: PresentationStyle, from screen: ScreenID) {
        let asked = Presentation(presenter: screen, style: style, root: root)
        queuePresentation(.presenting(asked), from: screen) { tree in
            _ = try await tree.present(root, style: style, from: screen)
        }
    }

    /// Presents the screen a route opens, as `requestPresentation(_:style:from:)` does.
    public func requestPresentation<R: RemoteRoute>(_ route: R, style: PresentationStyle, from screen: ScreenID) {
        do {
            requestPresentation(try route.screenSeed(), style: style, from: screen)
        } catch {
            presentationError = RemoteError(error, request: "present")
        }
    }

    /// Dismisses what a screen presents as a binding does: `presentation(presentedBy:)` reads nil at
    /// once; one request follows. A refusal lands in `presentationError`.
    public func requestDismissal(presentedBy screen: ScreenID) {
        queuePresentation(.dismissing, from: screen) { tree in try await tree.dismiss(presentedBy: screen) }
    }

    /// Presents a stack from a screen (`POST …/present`), dismissing first what it presents, if
    /// anything, and returns the new stack's id once the mirror shows it.
    ///
    /// - Throws: `RemoteError` (`.conflict` when the screen is not the topmost of its stack).
    @discardableResult
    public func present(_ root: ScreenSeed, style: PresentationStyle, from screen: ScreenID) async throws -> StackID {
        let replaced = stack(presentedBy: screen)?.id
        let (stack, version) = try await sendPresent(root, style: style, from: screen, replacing: replaced)
        try await sync(to: version)
        return stack
    }

    /// Presents the screen a route opens, as `present(_:style:from:)` does.
    @discardableResult
    public func present<R: RemoteRoute>(_ route: R, style: PresentationStyle, from screen: ScreenID) async throws
        -> StackID
    {
        try await present(try route.screenSeed(), style: style, from: screen)
    }

    /// Dismisses what a screen presents (`POST …/dismiss`), if anything, and returns once the
    /// mirror shows it.
    public func dismiss(presentedBy screen: ScreenID) async throws {
        guard let presented = stack(presentedBy: screen)?.id else { return }
        try await sync(to: try await sendDismiss(presented))
    }

    /// Shows `pending` for the screen until `change` (queued after the screen's earlier changes) is done.
    private func queuePresentation(
        _ pending: PendingPresentation, from screen: ScreenID,
        _ change: @escaping @MainActor (RemoteTree) async throws -> Void
    ) {
        pendingPresentations[screen] = pending
        let previous = presentationTasks[screen]
        presentationTasks[screen] = Task { [weak self] in
            await previous?.value
            guard let self else { return }
            do {
                try await change(self)
                if self.pendingPresentations[screen] == pending { self.presentationError = nil }
            } catch {
                self.presentationError = RemoteError(error, request: "present")
            }
            if self.pendingPresentations[screen] == pending {
                self.pendingPresentations[screen] = nil
                self.presentationTasks[screen] = nil
            }
        }
    }
}

extension RemoteError {
    /// `error` as a `RemoteError`: itself, or `.invalidResponse` describing it.
    init(_ error: any Error, request: String) {
        self = error as? RemoteError ?? RemoteError(.invalidResponse, request: request, detail: "\(error)")
    }
}
