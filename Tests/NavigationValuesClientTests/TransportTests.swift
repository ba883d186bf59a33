import Foundation
import NavigationValues
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@testable import NavigationValuesClient

/// How requests become URLs and headers.
@Suite struct TransportTests {
    func url(_ base: String, _ request: APIRequest) throws -> String {
        let transport = HTTPTransport(baseURL: try #require(URL(string: base)), configuration: .init())
        return try transport.url(for: request).absoluteString
    }

    @Test func pathsAreAppendedToTheBaseURLAndItsPrefix() throws {
        let request = APIRequest(
            method: "GET", path: "/v1/sessions/s_1/history", query: [("after", "2"), ("limit", "10")])
        #expect(
            try url("http://127.0.0.1:8080", request)
                == "http://127.0.0.1:8080/v1/sessions/s_1/history?after=2&limit=10")
        #expect(try url("http://127.0.0.1:8080/", request).hasPrefix("http://127.0.0.1:8080/v1/"))
        #expect(
            try url("https://example.com/navigation/", request).hasPrefix("https://example.com/navigation/v1/sessions/")
        )
        #expect(
            try url("https://example.com/navigation?x=1#top", request).hasPrefix("https://example.com/navigation/v1/"))
    }

    @Test func segmentsOutsideTheUnreservedCharactersAreEscaped() {
        #expect(HTTPTransport.path(["v1", "sessions", "s_A-b.c~d"]) == "/v1/sessions/s_A-b.c~d")
        #expect(HTTPTransport.path(["v1", "a b/c?"]) == "/v1/a%20b%2Fc%3F")
    }

    @Test func headersCarryTheTokenVersionKeyAndCursor() throws {
        let transport = HTTPTransport(baseURL: try #require(URL(string: "http://127.0.0.1:1")), configuration: .init())
        var request = APIRequest(
            method: "POST", path: "/v1/sessions/s_1/push", body: ["name": "A"], token: "t_x", ifMatch: 7,
            idempotencyKey: "k_1")
        request.lastEventID = 9
        let built = try transport.makeURLRequest(request)
        #expect(built.value(forHTTPHeaderField: "Authorization") == "Bearer t_x")
        #expect(built.value(forHTTPHeaderField: "If-Match") == "\"7\"")
        #expect(built.value(forHTTPHeaderField: "Idempotency-Key") == "k_1")
        #expect(built.value(forHTTPHeaderField: "Last-Event-ID") == "9")
        #expect(built.value(forHTTPHeaderField: "Content-Type") == "application/json; charset=utf-8")
        #expect(built.httpBody == Data(#"{"name":"A"}"#.utf8))
        #expect(APIAnswer.version(inETag: "W/\"12\"") == 12)
        #expect(APIAnswer.version(inETag: "nope") == nil)
    }
}
