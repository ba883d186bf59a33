/// A stack's stable id within a `ScreenTree`: `main` for the main stack, a tab's name, or a
/// presentation's id (the server's are `p_…`). Screens are keyed by `ScreenID`; stacks by this.
public struct StackID: Hashable, Sendable, Codable, RawRepresentable, CustomStringConvertible {
    /// The id's text.
    public var rawValue: String
    /// An id with this text.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// An id with this text.
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// The id's text.
    public var description: String { rawValue }

    /// The main stack every tree has: the one stack of a tree without tabs or presentations.
    public static let main = StackID("main")
}

/// How a presentation covers its presenter. Values and preferences flow the same way through
/// both; the style is what a client draws (SwiftUI's `.sheet` and `.fullScreenCover`).
public enum PresentationStyle: String, Sendable, Hashable, Codable, CaseIterable {
    /// A sheet (SwiftUI `.sheet`).
    case sheet
    /// A full-screen cover (SwiftUI `.fullScreenCover`).
    case fullScreenCover
}

/// What a stack of a `ScreenTree` is: the main stack, a tab, or a presentation of one of two styles.
public enum StackKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// The tree's main stack, which is always there.
    case main
    /// A named stack beside the main one (a tab of a `TabView`).
    case tab
    /// A stack presented as a sheet by a screen of another stack.
    case sheet
    /// A stack presented as a full-screen cover by a screen of another stack.
    case fullScreenCover

    /// The kind of a stack presented with `style`.
    public init(_ style: PresentationStyle) {
        switch style {
        case .sheet: self = .sheet
        case .fullScreenCover: self = .fullScreenCover
        }
    }

    /// The presentation style, nil for the main stack and tabs.
    public var presentationStyle: PresentationStyle? {
        switch self {
        case .main, .tab: nil
        case .sheet: .sheet
        case .fullScreenCover: .fullScreenCover
        }
    }

    /// Whether a screen presented this stack (a sheet or a full-screen cover).
    public var isPresentation: Bool { presentationStyle != nil }
}
