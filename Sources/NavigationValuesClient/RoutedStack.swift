import NavigationValues
import Observation

/// One position of a path of the app's routes: the route, and its place above the stack's root
/// (0: the first screen pushed), so a destination knows its screen even when a route appears
/// twice. What `NavigationStack(path:)` holds for a `RoutedStack`.
public struct RemotePathElement<Route: RemoteRoute>: Hashable {
    /// The place in the path: 0 is the first screen above the root.
    public let index: Int
    /// The route at that place.
    public let route: Route

    /// The route at a place of the path.
    public init(index: Int, route: Route) {
        self.index = index
        self.route = route
    }
}

extension RemotePathElement: Sendable where Route: Sendable {}

/// A stack of a mirror read and set as the app's routes: every binding a `NavigationStack` and the
/// presentations over it need, as properties (so SwiftUI's `@Bindable` makes them bindings), each
/// forwarding to the stack's and the tree's bindings. The SwiftUI layer only reads and sets these;
/// every decision is here and in `RemoteTree`'s bindings, where it is tested.
///
/// ```swift
/// @Bindable var routes = RoutedStack(tree.main, as: AppRoute.self)
/// NavigationStack(path: $routes.path) { … }
///     .sheet(item: $routes.sheet) { presentation in … }
/// ```
///
/// It holds no state of its own: make one whenever a view needs it. A stack that is not (or no
/// longer, or not yet: a presentation whose request flies) in the session reads an empty path and
/// presents nothing; setting it sends nothing.
@MainActor
@Observable
public final class RoutedStack<Route: RemoteRoute> {
    /// The mirror the stack belongs to.
    @ObservationIgnored public let tree: RemoteTree?
    /// The stack's id; nil for a presentation whose request flies.
    @ObservationIgnored public let stackID: StackID?

    /// The routes of `stack`.
    public init(_ stack: RemoteTree.Stack, as route: Route.Type = Route.self) {
        tree = stack.tree
        stackID = stack.id
    }

    /// The routes of what `presentation` shows: its stack once the server has it.
    public init(_ presentation: Presentation, in tree: RemoteTree, as route: Route.Type = Route.self) {
        self.tree = tree
        stackID = presentation.stack
    }

    /// The stack, while the session has it.
    public var stack: RemoteTree.Stack? { stackID.flatMap { tree?.stack($0) } }

    /// The path for `NavigationStack(path:)`: the routes above the root, each with its place.
    /// Setting it sets the stack's routes (`RemoteTree.Stack.requestRoutes(_:)`): one request.
    public var path: [RemotePathElement<Route>] {
        get {
            stack?.routes(Route.self).enumerated().map { RemotePathElement(index: $0.offset, route: $0.element) } ?? []
        }
        set { stack?.requestRoutes(newValue.map(\.route)) }
    }

    /// The element a `NavigationLink(value:)` pushes `route` with: the next place of the path.
    public func element(pushing route: Route) -> RemotePathElement<Route> {
        RemotePathElement(index: path.count, route: route)
    }

    /// The root screen (what the stack's root view reads); nil while a presentation's request flies.
    public var rootScreen: RemoteTree.Screen? { stack?.root }

    /// The screen a destination shows, as the server has it; nil while the change that pushes it flies.
    public func screen(for element: RemotePathElement<Route>) -> RemoteTree.Screen? {
        stack?.screen(atPathIndex: element.index)
    }

    /// A sheet over the stack (`.sheet(item:)`): what its topmost screen presents as a sheet.
    /// Set to nil (a user's swipe, a `dismiss` action), it dismisses that sheet.
    public var sheet: Presentation? {
        get { presentation(.sheet) }
        set { setPresentation(newValue, .sheet) }
    }

    /// A full-screen cover over the stack (`.fullScreenCover(item:)`), as `sheet` is.
    public var fullScreenCover: Presentation? {
        get { presentation(.fullScreenCover) }
        set { setPresentation(newValue, .fullScreenCover) }
    }

    /// What the topmost screen presents, in either style: for a platform with one kind of
    /// presentation (macOS shows a cover as a sheet).
    public var presentation: Presentation? {
        get { presentation(nil) }
        set { setPresentation(newValue, nil) }
    }

    private func presentation(_ style: PresentationStyle?) -> Presentation? {
        stack?.presentation(style: style)
    }

    private func setPresentation(_ value: Presentation?, _ style: PresentationStyle?) {
        stack?.setPresentation(value, style: style)
    }
}
