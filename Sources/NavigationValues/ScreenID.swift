/// A screen's stable, opaque id within its stack: what `ScreenStack` is keyed by (as TCA's
/// `StackState` is keyed by `StackElementID`). The server's ids are URL-safe strings (`c_…`),
/// unique across sessions; a local stack numbers its screens.
public struct ScreenID: Hashable, Sendable, Codable, RawRepresentable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}
