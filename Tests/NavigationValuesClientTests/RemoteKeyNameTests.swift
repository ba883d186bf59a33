import NavigationValues
import Testing

@testable import NavigationValuesClient

extension ScreenContext {
    @ValueEntry var headline: String = ""
}

struct SelectedItemKey: PreferenceKey { static let defaultValue = "" }
struct URLFilter: ValueKey { static let defaultValue = "" }
struct Draft: ValueKey, RemotelyNamedKey {
    static let defaultValue = ""
    static let remoteName = "draft-text"
}

/// A typed key's name on the server: derived from its type, or chosen.
@Suite struct RemoteKeyNameTests {
    @Test func namesAreDerivedFromTheTypeName() {
        #expect(Title.remoteName == "title")
        #expect(SelectedItemKey.remoteName == "selectedItem")
        #expect(URLFilter.remoteName == "urlFilter")
        #expect(ScreenContext.__Key_headline.remoteName == "headline", "the key @ValueEntry generates")
        #expect(RemoteKeyName.derived(from: "Key") == "key")
        #expect(RemoteKeyName.derived(from: "ID") == "id")
        #expect(RemoteKeyName.derived(from: "Outer.InnerKey") == "inner")
    }

    @Test func aRemotelyNamedKeyChoosesItsName() {
        #expect(Draft.remoteName == "draft-text")
        func name<K: ValueKey>(of key: K.Type) -> String { K.remoteName }
        #expect(name(of: Draft.self) == "draft-text", "also where the key is generic")
    }

    @Test func valuesBecomeJSONAndBack() throws {
        struct Point: Codable, Equatable {
            var x: Int
            var y: Int
        }
        #expect(try JSONValue(encoding: Point(x: 1, y: 2)) == ["x": 1, "y": 2])
        #expect(try (["x": 1, "y": 2] as JSONValue).decoded(as: Point.self) == Point(x: 1, y: 2))
        #expect(try JSONValue(encoding: "a") == "a")
        #expect(try JSONValue(encoding: 3) == 3)
        #expect(try JSONValue(encoding: 2.5) == 2.5)
        #expect(try JSONValue(encoding: [true, false]) == [true, false])
        #expect(try (5 as JSONValue).decoded(as: Int.self) == 5)
        #expect(try (5 as JSONValue).decoded(as: Double.self) == 5)
        #expect(throws: DecodingError.self) { try ("five" as JSONValue).decoded(as: Int.self) }
        #expect(throws: EncodingError.self) { try JSONValue(encoding: Double.nan) }
    }
}
