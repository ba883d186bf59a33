/// Why a `ScreenTree` refused a change: a stable code and a sentence that says what was wrong.
///
/// ```swift
/// do { try tree.removeStack(.main) } catch { error.code == .conflict }   // the main stack stays
/// ```
public struct NavigationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of refusal; stable, so that callers can match on it.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's name (`notFound`, `conflict`).
        public let rawValue: String
        private init(_ rawValue: String) { self.rawValue = rawValue }
        /// The code's name.
        public var description: String { rawValue }

        /// No stack or screen with the id given.
        public static let notFound = Code("notFound")
        /// The change does not fit the tree as it is: popping a root, pushing above a screen that
        /// presents, an id already in use, removing the main stack.
        public static let conflict = Code("conflict")
    }

    /// What kind of refusal.
    public var code: Code
    /// What was wrong.
    public var message: String

    /// A refusal of kind `code` saying `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}
