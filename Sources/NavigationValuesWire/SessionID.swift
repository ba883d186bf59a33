/// A session's opaque, URL-safe id (`s_…`; docs/API.md, General).
public struct SessionID: Hashable, Comparable, Sendable, Codable, RawRepresentable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Whether a session still takes mutations (docs/API.md: `"state": "active"` or `"ended"`).
public enum SessionState: String, Sendable, Codable, Equatable {
    case active
    case ended
}
