import HTTPCore
import NavigationValuesStore

/// The inspector, a web page for people who support or test an app: `GET /inspector/` and its
/// files, embedded in the binary from `inspector/` by `scripts/embed-inspector.sh` (nothing is
/// loaded from elsewhere, so it works offline). The page is open; what it shows needs a token,
/// which the person enters on the page and which it keeps in `sessionStorage` only.
///
/// Every file is answered with a strict `Content-Security-Policy` (scripts, styles and requests
/// only from this server), an `ETag` (its SHA-256) and `Cache-Control: no-cache`, so a browser
/// revalidates and gets 304 while the binary is the same.
package struct InspectorRoutes: Sendable {
    /// A file as served.
    struct File: Sendable {
        var contentType: String
        var body: [UInt8]
        var etag: String
    }

    let files: [String: File]

    package init() {
        var files: [String: File] = [:]
        for (name, text) in embeddedInspectorFiles {
            let body = Array(text.utf8)
            files[name] = File(
                contentType: Self.contentType(of: name), body: body,
                etag: "\"" + String(SHA256.hexDigest(of: body).prefix(32)) + "\"")
        }
        self.files = files
    }

    /// The names of the embedded files.
    package static var fileNames: [String] { embeddedInspectorFiles.map(\.name) }

    /// The embedded text of a file, as `scripts/embed-inspector.sh` wrote it.
    package static func embeddedText(of name: String) -> String? {
        embeddedInspectorFiles.first { $0.name == name }?.text
    }

    static let securityPolicy = [
        "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
        "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
    ].joined(separator: "; ")

    package func register(on router: Router) {
        router.get("/inspector") { request in
            let query = request.target.firstIndex(of: "?").map { String(request.target[$0...]) } ?? ""
            return Response(status: HTTPStatus(code: 308), headers: ["Location": "/inspector/" + query])
        }
        router.get("/inspector/") { request in try answer("index.html", request) }
        router.get("/inspector/{file}") { request in try answer(request.parameters["file"] ?? "", request) }
    }

    private func answer(_ name: String, _ request: Request) throws -> Response {
        guard let file = files[name] else {
            throw APIError(.notFound, "the inspector has no file '\(name)'")
        }
        var headers: HTTPHeaders = [
            "Content-Type": file.contentType, "ETag": file.etag, "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
        ]
        if file.contentType.hasPrefix("text/html") {
            headers["Content-Security-Policy"] = Self.securityPolicy
            headers["X-Frame-Options"] = "DENY"
        }
        if let tags = request.headers["if-none-match"],
            tags.split(separator: ",").contains(where: {
                HeaderValue.trimmed($0) == file.etag || HeaderValue.trimmed($0) == "*"
            })
        {
            return Response(status: .notModified, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: file.body)
    }

    private static func contentType(of name: String) -> String {
        if name.hasSuffix(".html") { return "text/html; charset=utf-8" }
        if name.hasSuffix(".css") { return "text/css; charset=utf-8" }
        if name.hasSuffix(".js") { return "text/javascript; charset=utf-8" }
        if name.hasSuffix(".svg") { return "image/svg+xml" }
        return "application/octet-stream"
    }
}
