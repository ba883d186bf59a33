import NavigationValues
import NavigationValuesWire
import Observation

extension RemoteTree {
    /// One stack of the mirror: the main stack, a tab, or a presentation (a sheet or a full-screen
    /// cover) with its presenter. Its `screens` change only with the server's events; `path` and
    /// the routes (`routes(_:)`, `setRoutes(_:)`) read as set while a change flies.
    ///
    /// A stack object stays the same for as long as the session has a stack with its id, so a view
    /// may keep it; once the stack is removed or dismissed it is no longer in the tree and keeps
    /// its last screens.
    @MainActor
    @Observable
    public final class Stack: Identifiable {
        /// `main`, a tab's name, or a presentation's id (`p_…`).
        public let id: StackID
        /// The main stack, a tab, a sheet or a full-screen cover.
        public let kind: StackKind
        /// The screen presenting this stack; nil for the main stack and tabs.
        public let presenter: ScreenID?
        /// Its screens, root first, as the server has them.
        public internal(set) var screens: [Screen] = []
        /// The screens asked for above the root, while the change flies (see `path`).
        var pendingPath: [ScreenSeed]?
        /// The last failure of a path change made by assignment (`setPath` throws instead).
        public var pathError: RemoteError?
        @ObservationIgnored var pathTask: Task<Void, Never>?
        @ObservationIgnored weak var tree: RemoteTree?

        init(id: StackID, kind: StackKind, presenter: ScreenID?) {
            self.id = id
            self.kind = kind
            self.presenter = presenter
        }

        /// The root screen.
        public var root: Screen? { screens.first }
        /// The topmost screen.
        public var top: Screen? { screens.last }

        /// The screen with this id, if it is on this stack.
        public subscript(id id: ScreenID) -> Screen? { screens.last { $0.id == id } }

        /// The presentation style, nil for the main stack and tabs.
        public var style: PresentationStyle? { kind.presentationStyle }
    }
}
