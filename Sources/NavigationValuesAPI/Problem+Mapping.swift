import Foundation
import HTTPServer
import NavigationValues
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire

// The one place where errors become RFC 9457 problem+json (STYLE.md, Errors). Anything a client
// can cause is a 4xx that says what was wrong; a 500 is our bug and shows nothing internal.

/// A problem details document.
struct Problem {
    var status: Int
    var slug: String
    var title: String
    var detail: String
    var errors: [APIError.FieldError] = []
    var headers: HTTPHeaders = [:]

    var json: JSONValue {
        var members: [String: JSONValue] = [
            "type": .string("/problems/\(slug)"), "title": .string(title), "status": .integer(Int64(status)),
            "detail": .string(detail),
        ]
        if !errors.isEmpty {
            members["errors"] = .array(errors.map { ["pointer": .string($0.pointer), "detail": .string($0.detail)] })
        }
        return .object(members)
    }

    var response: Response {
        var headers = headers
        headers["Content-Type"] = "application/problem+json"
        return Response(status: HTTPStatus(code: status), headers: headers, body: Array(json.serialized().utf8))
    }
}

enum ProblemMapping {
    /// The error responder the server is started with.
    @Sendable
    static func response(for error: any Error, request: Request?) -> Response {
        problem(for: error).response
    }

    static func problem(for error: any Error) -> Problem {
        switch error {
        case let error as APIError:
            var headers = HTTPHeaders()
            for (name, value) in error.headers { headers[name] = value }
            return Problem(
                status: error.kind.status, slug: error.kind.slug, title: error.kind.title, detail: error.detail,
                errors: error.errors, headers: headers)
        case let error as HTTPRequestError:
            let slug = error.status.reasonPhrase.lowercased().replacingOccurrences(of: " ", with: "-")
            return Problem(
                status: error.status.code, slug: slug, title: error.status.reasonPhrase, detail: error.detail,
                headers: error.headers)
        case let error as JSONParsingError:
            return Problem(status: 400, slug: "malformed-json", title: "Malformed JSON", detail: "\(error)")
        case let error as StoreError where error.code == .unavailable || error.code == .closed:
            return Problem(
                status: 503, slug: "store-unavailable", title: "Store unavailable",
                detail: "the database cannot take requests right now", headers: ["Retry-After": "1"])
        default:
            return Problem(
                status: 500, slug: "internal-error", title: "Internal Server Error",
                detail: "the server failed to answer this request")
        }
    }
}
