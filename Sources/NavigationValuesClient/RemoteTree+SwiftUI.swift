// NOT BUILT HERE: SwiftUI exists only on Apple platforms, and this project's toolchain is Linux, so
// this file is compiled out (`#if canImport(SwiftUI)`) of every build and test run here (it was
// compiled once against a hand-written stand-in for the declarations it uses, not against the SDK).
// It uses only SwiftUI API of iOS 18 and macOS 15, and makes no decision of its own: which request a
// binding's value sends, what is presented over a stack, what a dismissal sends, which screen a
// destination reads, are `RoutedStack`'s and `RemoteTree`'s (platform-neutral, tested on Linux);
// this layer only reads and sets those through `@Bindable` and puts views around them.
#if canImport(SwiftUI)
    import NavigationValues
    import SwiftUI

    // MARK: - The remote screen in the environment

    private struct RemoteScreenKey: EnvironmentKey {
        static var defaultValue: RemoteTree.Screen? { nil }
    }

    private struct RemoteTreeKey: EnvironmentKey {
        static var defaultValue: RemoteTree? { nil }
    }

    extension EnvironmentValues {
        /// The mirrored screen a view belongs to, as the seed's `@Environment(\.screenContext)` is:
        /// set on each stack's root view and on each destination by `RemoteNavigationStack`; nil
        /// while the change that makes the screen flies.
        ///
        /// ```swift
        /// @Environment(\.remoteScreen) var screen
        /// Text(screen?.resolved(Title.self) ?? "")          // observed
        /// Button("Send back") { Task { try await screen?.remote.updatePreference(Choice.self, value: "x") } }
        /// ```
        public var remoteScreen: RemoteTree.Screen? {
            get { self[RemoteScreenKey.self] }
            set { self[RemoteScreenKey.self] = newValue }
        }

        /// The mirror of the session a view shows (its `visibleScreen` is what a user sees).
        public var remoteTree: RemoteTree? {
            get { self[RemoteTreeKey.self] }
            set { self[RemoteTreeKey.self] = newValue }
        }
    }

    // MARK: - A stack

    /// A `NavigationStack` bound to a stack of a mirror over the app's routes, with the sheets and
    /// full-screen covers its topmost screen presents (each a `RemoteNavigationStack` of its own,
    /// its root shown by `destination`).
    ///
    /// ```swift
    /// RemoteNavigationStack(tree.main, for: AppRoute.self) {
    ///     HomeView()
    /// } destination: { route in
    ///     RouteView(route: route)
    /// }
    /// ```
    ///
    /// A destination pushes with `NavigationLink(value: routes.element(pushing: route))` or with
    /// `stack.requestRoutes(_:)`; `@Environment(\.remoteScreen)` is each screen's.
    public struct RemoteNavigationStack<Route: RemoteRoute, Root: View, Destination: View>: View {
        private let routes: RoutedStack<Route>
        private let root: Root
        private let destination: (Route) -> Destination

        /// A stack of the mirror, its root view, and the view of each route.
        public init(
            _ stack: RemoteTree.Stack, for route: Route.Type, @ViewBuilder root: () -> Root,
            @ViewBuilder destination: @escaping (Route) -> Destination
        ) {
            routes = RoutedStack(stack, as: route)
            self.root = root()
            self.destination = destination
        }

        public var body: some View {
            @Bindable var bound = routes
            NavigationStack(path: $bound.path) {
                root
                    .environment(\.remoteScreen, bound.rootScreen)
                    .navigationDestination(for: RemotePathElement<Route>.self) { element in
                        destination(element.route).environment(\.remoteScreen, bound.screen(for: element))
                    }
            }
            .environment(\.remoteTree, bound.tree)
            #if os(macOS)
                // macOS has no full-screen cover: either style shows as a sheet.
                .sheet(item: $bound.presentation) { presented($0) }
            #else
                .sheet(item: $bound.sheet) { presented($0) }
                .fullScreenCover(item: $bound.fullScreenCover) { presented($0) }
            #endif
        }

        /// What a presentation shows: a stack of its own, its root the route it was presented with.
        @ViewBuilder
        private func presented(_ presentation: Presentation) -> some View {
            if let tree = routes.tree {
                RemoteNavigationStack<Route, PresentedRoot<Route, Destination>, Destination>(
                    routes: RoutedStack(presentation, in: tree, as: Route.self),
                    root: PresentedRoot(presentation: presentation, destination: destination),
                    destination: destination)
            }
        }

        private init(routes: RoutedStack<Route>, root: Root, destination: @escaping (Route) -> Destination) {
            self.routes = routes
            self.root = root
            self.destination = destination
        }
    }

    /// A presentation's root view: the view of the route its root screen is.
    struct PresentedRoot<Route: RemoteRoute, Destination: View>: View {
        let presentation: Presentation
        let destination: (Route) -> Destination

        var body: some View {
            if let route = presentation.route(Route.self) { destination(route) }
        }
    }

    // MARK: - Tabs

    /// A `TabView` bound to a mirror's selection, a `RemoteNavigationStack` per tab (the main
    /// stack first, then the tabs in their order).
    ///
    /// ```swift
    /// RemoteTabView(tree, for: AppRoute.self) { stack in
    ///     TabRootView(stack: stack.id)
    /// } label: { stack in
    ///     Label(stack.id.rawValue, systemImage: "circle")
    /// } destination: { route in
    ///     RouteView(route: route)
    /// }
    /// ```
    public struct RemoteTabView<Route: RemoteRoute, Root: View, TabLabel: View, Destination: View>: View {
        @Bindable private var tree: RemoteTree
        private let root: (RemoteTree.Stack) -> Root
        private let label: (RemoteTree.Stack) -> TabLabel
        private let destination: (Route) -> Destination

        /// The mirror, each tab's root view and label, and the view of each route.
        public init(
            _ tree: RemoteTree, for route: Route.Type, @ViewBuilder root: @escaping (RemoteTree.Stack) -> Root,
            @ViewBuilder label: @escaping (RemoteTree.Stack) -> TabLabel,
            @ViewBuilder destination: @escaping (Route) -> Destination
        ) {
            _tree = Bindable(tree)
            self.root = root
            self.label = label
            self.destination = destination
        }

        public var body: some View {
            TabView(selection: $tree.selection) {
                ForEach(tree.tabs) { stack in
                    RemoteNavigationStack(stack, for: Route.self) {
                        root(stack)
                    } destination: {
                        destination($0)
                    }
                    .tabItem { label(stack) }
                    .tag(stack.id)
                }
            }
        }
    }
#endif
