import Foundation
import NavigationValues
import NavigationValuesAPI
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A response as a test sees it.
struct HTTPResult {
    var status: Int
    var headers: [String: String]
    var body: Data
    var json: JSONValue? { try? JSONValue(parsing: [UInt8](body)) }

    func header(_ name: String) -> String? {
        headers.first { $0.key.lowercased() == name.lowercased() }?.value
    }
}

/// A real HTTP client (URLSession) pointed at a running server.
struct TestClient: Sendable {
    let baseURL: URL
    let adminToken: String
    let session: URLSession

    @discardableResult
    func send(
        _ method: String, _ path: String, json body: JSONValue? = nil, token: String? = nil,
        headers: [String: String] = [:]
    ) async throws -> HTTPResult {
        var request = URLRequest(url: URL(string: path, relativeTo: baseURL)!)
        request.httpMethod = method
        if let body {
            request.httpBody = Data(body.serialized().utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var fields: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        return HTTPResult(status: http.statusCode, headers: fields, body: data)
    }
}

/// Starts a server on 127.0.0.1, port 0, on a SQLite file in a fresh temp folder (or the given
/// one), runs `body`, and shuts the server down on success and on failure.
func withRunningServer<T>(
    databasePath: String? = nil,
    configure: (inout NavigationValuesServer.Configuration) -> Void = { _ in },
    _ body: (TestClient, NavigationValuesServer) async throws -> T
) async throws -> T {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-api-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { if databasePath == nil { try? FileManager.default.removeItem(at: folder) } }
    var configuration = NavigationValuesServer.Configuration()
    configuration.port = 0
    configuration.eventLoopCount = 2
    configuration.adminToken = "admin-secret"
    configuration.databasePath = databasePath ?? folder.appendingPathComponent("test.sqlite").path
    configure(&configuration)
    let server = try await NavigationValuesServer.start(configuration)
    let client = TestClient(
        baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, adminToken: server.adminToken,
        session: URLSession(configuration: .ephemeral))
    do {
        let result = try await body(client, server)
        await server.shutdown()
        return result
    } catch {
        await server.shutdown()
        throw error
    }
}
