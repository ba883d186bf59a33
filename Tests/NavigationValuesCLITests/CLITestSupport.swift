import Foundation
import TestSupport
import Testing

/// The environment a child gets: ours without any `NAVIGATION_VALUES_*`, plus `extra`.
func childEnvironment(_ extra: [String: String]) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("NAVIGATION_VALUES_") }
    for (name, value) in extra { environment[name] = value }
    return environment
}

/// What a finished `navigation-values` printed, and how it ended.
typealias Outcome = ChildProcess.Outcome

/// Runs the built `navigation-values` with `arguments` to its end (the test target depends on it).
func run(
    _ arguments: [String], environment: [String: String] = [:], directory: URL? = nil
) async throws -> Outcome {
    try await ChildProcess.run(
        ChildProcess.builtProduct(named: "navigation-values"), arguments: arguments,
        environment: childEnvironment(environment), directory: directory)
}

/// A `serve` child on port 0 in a fresh temporary folder, with its address once it listens.
final class ServeProcess: Sendable {
    let child: ChildProcess
    let folder: URL
    let baseURL: URL
    let listeningLine: String
    let client: HTTPClient
    /// The address of the `/metrics` listener of its own (`metrics on http://H:P`, printed
    /// before `listening on`), when `--metrics-port` asked for one.
    let metricsURL: URL?

    /// Starts `navigation-values serve` with `arguments`; with a `launcher` (such as
    /// `["/usr/bin/prlimit", "--fsize=…", "--"]`), through it, which must exec the server.
    /// With `tls`, the server must announce HTTPS, and `client` speaks it.
    init(
        _ arguments: [String] = [], environment: [String: String] = [:], launcher: [String] = [],
        tls: TLSClientOptions? = nil
    ) async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var arguments = ["serve"] + arguments
        if !arguments.contains("--port") && environment["NAVIGATION_VALUES_PORT"] == nil {
            arguments += ["--port", "0"]
        }
        if let program = launcher.first {
            child = try ChildProcess(
                URL(fileURLWithPath: program),
                arguments: Array(launcher.dropFirst()) + [try ChildProcess.builtProduct(named: "navigation-values").path]
                    + arguments,
                environment: childEnvironment(environment), directory: folder)
        } else {
            child = try ChildProcess(
                built: "navigation-values", arguments: arguments, environment: childEnvironment(environment),
                directory: folder)
        }
        // The first line on stdout, which must be the `listening on` line, after the `metrics on`
        // line when there is one.
        var line = try await child.line { _ in true }
        if line.hasPrefix("metrics on http://") {
            metricsURL = URL(string: String(line.dropFirst("metrics on ".count)))
            line = try await child.line { _ in true }
        } else {
            metricsURL = nil
        }
        let scheme = tls == nil ? "http" : "https"
        guard line.hasPrefix("listening on \(scheme)://"), let url = URL(string: String(line.dropFirst(13))) else {
            let outcome = try await child.outcome(timeout: .seconds(5))
            throw ChildProcessError("serve printed no 'listening on' line: \(outcome)")
        }
        listeningLine = line
        baseURL = url
        client = try HTTPClient(baseURL: url, tls: tls)
    }

    /// Waits for a line of the server's log (stderr) that contains `text`, and returns it.
    func logLine(containing text: String, timeout: Duration = .seconds(30)) async throws -> String {
        let lines = child.standardError.lines
        let found = try await withTimeout(timeout, "a log line with '\(text)'") { () async -> String? in
            for await line in lines where line.contains(text) { return line }
            return nil
        }
        guard let found else { throw ChildProcessError("the server's log ended without '\(text)'") }
        return found
    }

    /// Sends `method path` to the server, with `body` as JSON.
    func send(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:]) async throws
        -> HTTPResponse
    {
        var fields = headers
        if body != nil { fields["Content-Type"] = "application/json" }
        return try await client.send(method, path, headers: fields, body: body.map { Array($0.utf8) })
    }

    /// The server's resident memory now (`VmRSS` of `/proc/PID/status`), in bytes.
    func residentBytes() throws -> Int {
        let status = String(
            decoding: FileHandle(forReadingAtPath: "/proc/\(child.processIdentifier)/status")?.readDataToEndOfFile()
                ?? Data(), as: UTF8.self)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kibibytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { throw ChildProcessError("no VmRSS for process \(child.processIdentifier)") }
        return kibibytes * 1024
    }

    /// One sample of `/metrics`, such as `navigation_values_subscribers`.
    func metric(_ name: String) async throws -> Double? {
        let text = try await send("GET", "/metrics").text
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    /// Sends `signal` and returns how the server ended.
    func stop(_ signal: Int32 = SIGTERM) async throws -> Outcome {
        child.signal(signal)
        return try await child.outcome()
    }

    deinit {
        try? FileManager.default.removeItem(at: folder)
    }
}
