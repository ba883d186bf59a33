import Foundation
import HTTPServer

// `http-bench-server [PORT] [THREADS]`: serves `GET /healthz` for scripts/bench-http.sh.
let arguments = CommandLine.arguments
let port = arguments.count > 1 ? Int(arguments[1]) ?? 8080 : 8080
let threads = arguments.count > 2 ? Int(arguments[2]) : nil

let body = Array(#"{"status":"ok"}"#.utf8)
let router = Router()
router.get("/healthz") { _ in
    Response(status: .ok, headers: ["Content-Type": "application/json"], body: body)
}

var configuration = HTTPServer.Configuration(host: "127.0.0.1", port: port)
if let threads { configuration.eventLoopCount = threads }
let server = HTTPServer(configuration: configuration, responder: router.buildResponder())
server.shutdownOnSignals()  // before announcing the port: no signal can slip in between
do {
    try await server.start()
} catch {
    FileHandle.standardError.write(Data("http-bench-server: \(error)\n".utf8))
    exit(1)
}
FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(server.port)\n".utf8))
await server.waitUntilStopped()
exit(0)
