import Foundation
import HTTPServer
import Testing

@Suite struct ProblemDetailsTests {
    @Test func theDocumentIsCompactSortedJSONWithItsErrorsAndEscapes() throws {
        let problem = ProblemDetails(
            type: "/problems/unprocessable-content", title: "Invalid request content", status: .unprocessableContent,
            detail: "2 invalid values: \"a\\b\"\n\t\u{01}",
            errors: [.init(pointer: "/values/a~1b", detail: "expected integer")],
            headers: ["Retry-After": "1"])
        let text = String(decoding: problem.json, as: UTF8.self)
        #expect(
            text
                == #"{"detail":"2 invalid values: \"a\\b\"\n\t\u0001","errors":[{"detail":"expected integer","pointer":"/values/a~1b"}],"status":422,"title":"Invalid request content","type":"/problems/unprocessable-content"}"#
        )
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(problem.json)) as? [String: Any])
        #expect(parsed["detail"] as? String == "2 invalid values: \"a\\b\"\n\t\u{01}")
        let response = problem.response
        #expect(response.status == .unprocessableContent)
        #expect(response.headers["content-type"] == "application/problem+json")
        #expect(response.headers["retry-after"] == "1")
    }

    @Test func theDefaultResponderHidesAnythingButTheServersOwnErrors() {
        struct Secret: Error {}
        let hidden = HTTPServer.problemResponse(for: Secret(), request: nil)
        #expect(hidden.status == .internalServerError)
        guard case .bytes(let body) = hidden.body else {
            Issue.record("not a complete body")
            return
        }
        #expect(
            String(decoding: body, as: UTF8.self)
                == #"{"detail":"The server failed to answer this request.","status":500,"title":"Internal Server Error","type":"about:blank"}"#
        )
        let own = HTTPServer.problemResponse(
            for: HTTPRequestError(.methodNotAllowed, detail: "no", headers: ["Allow": "GET"]), request: nil)
        #expect(own.status == .methodNotAllowed && own.headers["allow"] == "GET")
    }
}
