import HTTPCore
import NavigationValues
import NavigationValuesSessions
import NavigationValuesWire

// What each endpoint answers over HTTP (docs/API.md, Endpoints and Details): statuses, `ETag`,
// `Location`, and JSON bodies from the shared wire shapes. The same answers are kept for
// idempotent retries, so a retry gets exactly the first answer.

extension StoredAnswer {
    /// A mutation's answer: 201 for a push, 204 without a body for an end, 200 otherwise; `ETag`
    /// is the new version.
    init(_ result: MutationResult) {
        let status: Int
        switch result {
        case .pushed, .stackCreated, .stackPresented: status = 201
        case .ended: status = 204
        default: status = 200
        }
        self.init(
            status: status, headers: ["ETag": "\"\(result.version)\""],
            body: result.serializedBytes() ?? [])
    }

    /// A create's answer: 201, `ETag: "1"` and the new session's `Location`.
    init(_ created: CreatedSession) {
        self.init(
            status: 201,
            headers: [
                "ETag": "\"\(created.session.version)\"", "Location": "/v1/sessions/\(created.session.id.rawValue)",
            ],
            body: created.json.serializedBytes())
    }

    /// The HTTP response: a JSON body when there is one.
    var response: Response {
        var fields = HTTPHeaders()
        fields.reserveCapacity(headers.count + 1)  // one buffer for them all, not one per growth
        if !body.isEmpty { fields["Content-Type"] = "application/json; charset=utf-8" }
        for (name, value) in headers { fields[name] = value }
        return Response(status: HTTPStatus(code: status), headers: fields, body: body)
    }
}

extension CommandOutcome {
    var response: Response {
        switch self {
        case .applied(let result, let answer): (answer ?? StoredAnswer(result)).response
        case .replayed(let answer): answer.replayedResponse
        }
    }
}

extension CreateOutcome {
    var response: Response {
        switch self {
        case .created(let created): StoredAnswer(created).response
        case .replayed(let answer): answer.replayedResponse
        }
    }
}

extension StoredAnswer {
    /// The first answer again, marked as such.
    var replayedResponse: Response {
        var response = response
        response.headers["Idempotent-Replayed"] = "true"
        return response
    }
}

extension SessionQuery.Result {
    var response: Response {
        switch self {
        case .session(let session): .json(text: session.json, headers: ["ETag": "\"\(session.version)\""])
        case .screen(let screen, let version): .json(screen.json, headers: ["ETag": "\"\(version)\""])
        case .stacks(let list): .json(list.json, headers: ["ETag": "\"\(list.version)\""])
        case .stack(let stack, let version): .json(stack.json, headers: ["ETag": "\"\(version)\""])
        }
    }
}

extension Response {
    /// A JSON answer (`application/json; charset=utf-8`).
    static func json(_ body: JSONValue, status: HTTPStatus = .ok, headers: HTTPHeaders = [:]) -> Response {
        json(text: Array(body.serialized().utf8), status: status, headers: headers)
    }

    /// A JSON answer from JSON text already encoded.
    static func json(text body: [UInt8], status: HTTPStatus = .ok, headers: HTTPHeaders = [:]) -> Response {
        var fields = headers
        // Room for this field and for the X-Request-Id that RequestLogging adds: one allocation.
        fields.reserveCapacity(headers.count + 2)
        fields["Content-Type"] = "application/json; charset=utf-8"
        return Response(status: status, headers: fields, body: body)
    }
}
