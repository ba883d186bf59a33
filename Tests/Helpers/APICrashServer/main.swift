// api-crash-server --db PATH --admin-token TOKEN [--port P] [--hold-write-behind on]
//
// Test-only: serves the session API on 127.0.0.1, port 0 (or P: a restart on the same address, for
// clients that reconnect), on the database at PATH (with `--hold-write-behind on`, the state rows
// are never written behind the log on their own: `WriteBehind.isHeldForTests`; and retention, which
// writes every waiting state before it reads the sessions' rows, does not run), prints
// `listening on http://127.0.0.1:PORT` once it accepts connections, and runs until killed. The
// API's kill -9 test drives it over HTTP, kills it mid-load and restarts it on the same file.
import Foundation
import HTTPServer
import NavigationValuesAPI
import NavigationValuesStore

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("api-crash-server: \(message)\n".utf8))
    exit(2)
}

var configuration = NavigationValuesServer.Configuration()
configuration.port = 0
configuration.eventLoopCount = 2
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fail("\(flag) needs a value") }
    switch flag {
    case "--db": configuration.databasePath = value
    case "--admin-token": configuration.adminToken = value
    case "--port":
        guard let port = Int(value), (0...65_535).contains(port) else { fail("--port needs a port, not \(value)") }
        configuration.port = port
    case "--hold-write-behind":
        configuration.writeBehind = .standard
        configuration.writeBehind.isHeldForTests = value == "on"
        if value == "on" { configuration.retentionInterval = nil }
    default: fail("unknown flag \(flag); usage: api-crash-server --db PATH --admin-token TOKEN [--port P]")
    }
}
guard configuration.adminToken != nil else { fail("usage: api-crash-server --db PATH --admin-token TOKEN") }

do {
    let signals = SignalCatcher()
    let server = try await NavigationValuesServer.start(configuration)
    FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(server.port)\n".utf8))
    try await server.runUntilSignal(signals)
} catch {
    fail("\(error)")
}
