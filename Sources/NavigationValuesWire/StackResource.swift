import NavigationValues

/// A stack of a session as the API shows it (docs/Stacks.md, Over HTTP): the main stack, a tab or a
/// presentation, with its screens root first.
///
/// ```json
/// {"id": "p_…", "kind": "sheet", "presenter": "c_…", "screens": [SCREEN, …]}
/// ```
public struct StackResource: Sendable, Equatable {
    /// `main`, a tab's name, or a presentation's id (`p_…`).
    public var id: StackID
    /// The main stack, a tab, a sheet or a full-screen cover.
    public var kind: StackKind
    /// The screen that presents this stack; nil for the main stack and tabs.
    public var presenter: ScreenID?
    /// Root first, topmost last.
    public var screens: [ScreenResource]

    /// A stack with its screens, root first.
    public init(id: StackID, kind: StackKind, presenter: ScreenID? = nil, screens: [ScreenResource]) {
        self.id = id
        self.kind = kind
        self.presenter = presenter
        self.screens = screens
    }

    /// The stack as JSON.
    public var json: JSONValue {
        [
            "id": .string(id.rawValue), "kind": .string(kind.rawValue),
            "presenter": presenter.map { .string($0.rawValue) } ?? .null, "screens": .array(screens.map(\.json)),
        ]
    }

    /// Decodes what `json` writes.
    ///
    /// - Throws: `WireDecodingError` naming the first member that is missing or mistyped.
    public init(json: JSONValue, pointer: String = "") throws(WireDecodingError) {
        let fields = try JSONObjectReader(json, at: pointer)
        self.init(
            id: try fields.stackID("id"), kind: try fields.stackKind("kind"),
            presenter: try fields.optionalScreenID("presenter"),
            screens: try fields.list("screens") { item, pointer throws(WireDecodingError) in
                try ScreenResource(json: item, pointer: pointer)
            })
    }
}

/// What `GET /v1/sessions/{id}/stacks` answers: every stack (the main one first, then the tabs,
/// then the presentations), which one is selected, and the screen a user sees.
public struct StackList: Sendable, Equatable {
    /// Every stack, the main one first, then the tabs, then the presentations.
    public var stacks: [StackResource]
    /// `main` or a tab.
    public var selectedStack: StackID
    /// The topmost screen of the visible stack (the selected one, or what it presents).
    public var visibleScreen: ScreenID?
    /// The session's version.
    public var version: Int64

    /// A list of stacks at `version`.
    public init(stacks: [StackResource], selectedStack: StackID, visibleScreen: ScreenID?, version: Int64) {
        self.stacks = stacks
        self.selectedStack = selectedStack
        self.visibleScreen = visibleScreen
        self.version = version
    }

    /// `{"stacks": [STACK], "selectedStack", "visibleScreen", "version"}`.
    public var json: JSONValue {
        [
            "stacks": .array(stacks.map(\.json)), "selectedStack": .string(selectedStack.rawValue),
            "visibleScreen": visibleScreen.map { .string($0.rawValue) } ?? .null, "version": .integer(version),
        ]
    }

    /// Decodes what `json` writes.
    public init(json: JSONValue) throws(WireDecodingError) {
        let fields = try JSONObjectReader(json)
        self.init(
            stacks: try fields.list("stacks") { item, pointer throws(WireDecodingError) in
                try StackResource(json: item, pointer: pointer)
            },
            selectedStack: try fields.stackID("selectedStack"),
            visibleScreen: try fields.optionalScreenID("visibleScreen"), version: try fields.integer("version"))
    }
}

extension JSONObjectReader {
    func stackID(_ name: String) throws(WireDecodingError) -> StackID { StackID(try string(name)) }

    func stackIDs(_ name: String) throws(WireDecodingError) -> [StackID] {
        try strings(name).map(StackID.init(rawValue:))
    }

    /// A tab's position among the tabs: an integer of at least 0.
    func position(_ name: String) throws(WireDecodingError) -> Int {
        guard let number = try value(name).integerValue, number >= 0, let position = Int(exactly: number) else {
            throw WireDecodingError(pointer: at(name), reason: "expected an integer of at least 0")
        }
        return position
    }

    func stackKind(_ name: String) throws(WireDecodingError) -> StackKind {
        let text = try string(name)
        guard let kind = StackKind(rawValue: text) else {
            throw WireDecodingError(pointer: at(name), reason: "expected main, tab, sheet or fullScreenCover")
        }
        return kind
    }
}
