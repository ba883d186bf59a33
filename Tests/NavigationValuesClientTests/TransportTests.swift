import Foundation
import NavigationValues
import Testing

@testable import NavigationValuesClient

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

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

    @Test func theTargetIsThePathAndItsEncodedQuery() throws {
        let transport = HTTPTransport(baseURL: try #require(URL(string: "http://127.0.0.1:1/")), configuration: .init())
        let built = try transport.makeTransportRequest(
            APIRequest(method: "GET", path: "/v1/sessions", query: [("cursor", "a b"), ("limit", "2")]), token: nil)
        #expect(built.target == "/v1/sessions?cursor=a%20b&limit=2")
        #expect(built.query == [.init(name: "cursor", value: "a b"), .init(name: "limit", value: "2")])
        #expect(built.url.absoluteString == "http://127.0.0.1:1/v1/sessions?cursor=a%20b&limit=2")
    }

    @Test func segmentsOutsideTheUnreservedCharactersAreEscaped() {
        #expect(HTTPTransport.path(["v1", "sessions", "s_A-b.c~d"]) == "/v1/sessions/s_A-b.c~d")
        #expect(HTTPTransport.path(["v1", "a b/c?"]) == "/v1/a%20b%2Fc%3F")
    }

    @Test func headersCarryTheTokenVersionKeyAndCursor() throws {
        let transport = HTTPTransport(baseURL: try #require(URL(string: "http://127.0.0.1:1")), configuration: .init())
        var request = APIRequest(
            method: "POST", path: "/v1/sessions/s_1/push", body: ["name": "A"], ifMatch: 7,
            idempotencyKey: "k_1")
        request.lastEventID = 9
        let built = try transport.makeTransportRequest(request, token: "t_x")
        #expect(built.header("authorization") == "Bearer t_x")
        #expect(built.header("If-Match") == "\"7\"")
        #expect(built.header("Idempotency-Key") == "k_1")
        #expect(built.header("Last-Event-ID") == "9")
        #expect(built.header("Content-Type") == "application/json; charset=utf-8")
        #expect(built.body == Data(#"{"name":"A"}"#.utf8))
        #expect(built.url.absoluteString == "http://127.0.0.1:1/v1/sessions/s_1/push")
        // URLSession's request carries them all as they are.
        let urlRequest = URLSessionTransport.urlRequest(built)
        #expect(urlRequest.value(forHTTPHeaderField: "Authorization") == "Bearer t_x")
        #expect(urlRequest.value(forHTTPHeaderField: "If-Match") == "\"7\"")
        #expect(urlRequest.value(forHTTPHeaderField: "Idempotency-Key") == "k_1")
        #expect(urlRequest.value(forHTTPHeaderField: "Last-Event-ID") == "9")
        #expect(urlRequest.httpBody == Data(#"{"name":"A"}"#.utf8))
        #expect(urlRequest.httpMethod == "POST")
        #expect(APIAnswer.version(inETag: "W/\"12\"") == 12)
        #expect(APIAnswer.version(inETag: "nope") == nil)
    }
}
