import Foundation
import NavigationValues

/// An app's own route type, as `NavigationStack(path:)` holds it, mapped to a screen of the server
/// (its name and the values it is pushed with) and back: what the path bindings of a mirror's
/// stacks read and write (`RemoteTree.Stack.routes(_:)`, `setRoutes(_:)`).
///
/// ```swift
/// enum Route: RemoteRoute {
///     case inbox                 // the screen "inbox", no values
///     case message(id: Int)      // the screen "message", values {"id": 7}
/// }
/// try await tree.main.setRoutes([Route.inbox, .message(id: 7)])
/// tree.main.routes(Route.self)   // [.inbox, .message(id: 7)]
/// ```
///
/// A `Codable` type gets both directions from its coding (JSONEncoder's and JSONDecoder's default
/// strategies), as Swift synthesizes it:
///
/// | the route encodes as | screen name | values |
/// |---|---|---|
/// | `{"message": {"id": 7}}` (an enum case, with or without associated values) | `message` | `{"id": 7}` |
/// | `"inbox"` (a `String` raw value) | `inbox` | none |
/// | another object (a struct) | the type's name | the object's members |
/// | anything else | the type's name | `{"route": …}` |
///
/// Back, a screen is the route its name and own values decode as (members the route does not
/// declare, values written later, are ignored). A strict schema must declare the values routes
/// carry. Implement both requirements for another mapping.
public protocol RemoteRoute: Hashable, Codable {
    /// The screen this route opens: its name and the values it is pushed with.
    ///
    /// - Throws: `RemoteError.invalidValue` when the route cannot be written as JSON.
    func screenSeed() throws -> ScreenSeed

    /// The route of a screen with this name and these own values; nil when it is not one of this type.
    init?(screenName: String, values: [String: JSONValue])
}

extension RemoteRoute {
    public func screenSeed() throws -> ScreenSeed {
        let json = try encodedValue(self, for: "route", request: "route \(self)")
        switch json {
        case .object(let members) where members.count == 1:
            if let (name, inner) = members.first, case .object(let values) = inner {
                return ScreenSeed(name, values: values)
            }
            return ScreenSeed(Self.screenTypeName, values: members)
        case .object(let members):
            return ScreenSeed(Self.screenTypeName, values: members)
        case .string(let name):
            return ScreenSeed(name)
        default:
            return ScreenSeed(Self.screenTypeName, values: ["route": json])
        }
    }

    public init?(screenName: String, values: [String: JSONValue]) {
        var candidates: [JSONValue] = []
        if screenName == Self.screenTypeName {
            candidates = [.object(values)] + (values["route"].map { [$0] } ?? [])
        } else {
            candidates = [.object([screenName: .object(values)]), .string(screenName)]
        }
        for json in candidates {
            if let route = try? json.decoded(as: Self.self) {
                self = route
                return
            }
        }
        return nil
    }

    /// The screen name of a route that is not an enum case: the type's own name.
    static var screenTypeName: String { String(describing: Self.self) }

    /// The route of a mirrored screen, if it is one of this type.
    init?(_ screen: RemoteTree.Screen) {
        self.init(screenName: screen.name, values: screen.values)
    }

    /// The route of a screen asked for, if it is one of this type.
    init?(_ seed: ScreenSeed) {
        self.init(screenName: seed.name, values: seed.values)
    }
}
