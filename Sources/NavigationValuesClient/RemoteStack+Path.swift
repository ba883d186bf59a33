import NavigationValues
import NavigationValuesWire

extension RemoteStack {
    /// The names of the screens above the root, for `NavigationStack(path:)`.
    ///
    /// Setting it sends the fewest requests that make the server's stack match (see
    /// `setPath(_:)`); until the server's events arrive, it reads as what was set, so SwiftUI does
    /// not snap back. A failure lands in `pathError`, and the path reads the server's stack again.
    ///
    /// ```swift
    /// NavigationStack(path: $stack.path) {
    ///     HomeView().navigationDestination(for: String.self) { name in ScreenView(name: name) }
    /// }
    /// ```
    public var path: [String] {
        get { pendingPath ?? screens.dropFirst().map(\.name) }
        set {
            guard newValue != path else { return }
            pendingPath = newValue
            let previous = pathTask
            pathTask = Task { [weak self] in
                await previous?.value
                guard let self else { return }
                do {
                    try await self.setPath(newValue.map { ScreenSeed($0) })
                    if self.pendingPath == newValue { self.pathError = nil }
                } catch let error as RemoteError {
                    self.pathError = error
                } catch {
                    self.pathError = RemoteError(.invalidResponse, request: "path", detail: "\(error)")
                }
                if self.pendingPath == newValue { self.pendingPath = nil }
            }
        }
    }

    /// Makes the screens above the root the ones in `target` with the fewest requests, keeping the
    /// screens that already match its start (by name): one pop to the last kept screen when
    /// anything is above it, then one push per new screen; with nothing to keep, one path replace
    /// when it takes more than a single pop or push. Returns once the mirror shows the result, with
    /// the requests it sent.
    ///
    /// ```swift
    /// try await stack.setPath([ScreenSeed("Inbox"), ScreenSeed("Message", values: ["id": 7])])
    /// ```
    ///
    /// Each request names the screens it keeps by id, so a change made meanwhile by another client
    /// is not undone: the last request to arrive wins.
    @discardableResult
    public func setPath(_ target: [ScreenSeed]) async throws -> [PathOperation] {
        let current = screens.dropFirst().map { (id: $0.id, name: $0.name) }
        let operations = PathPlan.operations(from: Array(current), to: target)
        var version = self.version
        for operation in operations {
            switch operation {
            case .pop(let screen): version = try await session.pop(to: screen).version
            case .push(let seed): version = try await session.push(seed).version
            case .replacePath(let seeds): version = try await session.replacePath(seeds).version
            }
        }
        try await sync(to: version)
        return operations
    }
}
