import Testing

@testable import NavigationValuesRoutes

/// Which `Content-Type` values name JSON, read on the header's bytes: the media type before any
/// `;`, between spaces and tabs, in any case, is `application/json` or ends in `+json`.
@Suite struct MediaTypeTests {
    @Test(arguments: [
        "application/json", "Application/JSON", "application/json; charset=utf-8", " \tapplication/json\t ;x",
        "application/problem+json", "APPLICATION/VND.API+JSON;v=1", ";application/json", "text/x+json",
    ])
    func json(_ value: String) {
        #expect(HeaderValue.isJSONMediaType(value))
    }

    @Test(arguments: [
        "", ";", "text/plain", "application/jsonx", "application/json5", "xapplication/json", "application/ json",
        "+jsonx", "application/x-www-form-urlencoded", "json", " ;application/json", "application/jsón",
    ])
    func notJSON(_ value: String) {
        #expect(!HeaderValue.isJSONMediaType(value))
    }
}
