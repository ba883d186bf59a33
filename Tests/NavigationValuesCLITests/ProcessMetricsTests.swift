import Foundation
import TestSupport
import Testing

/// The process in `/metrics` (Prometheus's `process_…` figures and the build's version), and
/// `/metrics` on a listener of its own, on a `serve` child: its figures are its own, not those of
/// this test process, whose other tests open and close descriptors meanwhile.
@Suite struct ProcessMetricsTests {
    /// Every sample of an exposition, by its name with labels.
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    static func scrape(_ server: ServeProcess, from url: URL? = nil) async throws -> [String: Double] {
        let response =
            if let url { try await HTTPClient(baseURL: url).get("/metrics") } else {
                try await server.send("GET", "/metrics")
            }
        #expect(response.status == 200)
        return samples(response.text)
    }

    @Test func theProcessFiguresAreTheServersOwn() async throws {
        let startedBefore = Date().timeIntervalSince1970
        let server = try await ServeProcess()
        let first = try await Self.scrape(server)
        let text = try await server.send("GET", "/metrics").text
        for (name, type) in [
            ("process_cpu_seconds_total", "counter"), ("process_open_fds", "gauge"), ("process_max_fds", "gauge"),
            ("process_resident_memory_bytes", "gauge"), ("process_start_time_seconds", "gauge"),
            ("navigation_values_build_info", "gauge"),
        ] {
            #expect(text.contains("# TYPE \(name) \(type)\n"), "\(name)")
        }
        let version = try await run(["--version"]).stdout.split(separator: " ").last.map {
            $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #expect(first["navigation_values_build_info{version=\"\(version ?? "?")\"}"] == 1)

        // Resident memory as the kernel reports it for the child (within what it allocates between the two reads).
        let resident = try #require(first["process_resident_memory_bytes"])
        let kernelResident = Double(try server.residentBytes())
        #expect(resident > 1_000_000)
        #expect(resident > kernelResident / 2 && resident < kernelResident * 2)
        #expect(try #require(first["process_virtual_memory_bytes"]) > resident)
        let start = try #require(first["process_start_time_seconds"])
        #expect(start >= startedBefore.rounded(.down) - 1 && start <= Date().timeIntervalSince1970 + 1)
        let openDescriptors = try #require(first["process_open_fds"])
        #expect(openDescriptors > 3)
        #expect(try #require(first["process_max_fds"]) >= openDescriptors)

        // Twenty connections held open: twenty more descriptors in the server.
        var connections: [RawClient] = []
        for _ in 0..<20 {
            let connection = try RawClient(port: server.baseURL.port ?? 0)
            let answer = try await connection.exchange("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(answer.status == 200)
            connections.append(connection)
        }
        let held = try #require(try await Self.scrape(server)["process_open_fds"])
        #expect(held >= openDescriptors + 20)
        connections.removeAll()
        try await waitUntil("the closed connections' descriptors are closed") {
            (try await Self.scrape(server)["process_open_fds"] ?? .infinity) < held - 10
        }

        // Sessions of 60 KB each: resident memory grows, and CPU time counts the work.
        let big = String(repeating: "m", count: 60_000)
        for index in 0..<60 {
            let created = try await server.send(
                "POST", "/v1/sessions", body: #"{"root": {"name": "S\#(index)", "values": {"big": "\#(big)"}}}"#)
            #expect(created.status == 201)
        }
        let second = try await Self.scrape(server)
        #expect(try #require(second["process_resident_memory_bytes"]) > resident)
        #expect(try #require(second["process_cpu_seconds_total"]) > first["process_cpu_seconds_total"] ?? .infinity)
        #expect(second["process_start_time_seconds"] == start)
        _ = try await server.stop()
    }

    @Test func metricsOnTheirOwnListenerAreNoLongerOnThePublicOne() async throws {
        let server = try await ServeProcess(["--metrics-port", "0"])
        let metricsURL = try #require(server.metricsURL)
        #expect(metricsURL.host == "127.0.0.1")
        #expect(metricsURL.port != server.baseURL.port)
        let samples = try await Self.scrape(server, from: metricsURL)
        #expect(try #require(samples["process_open_fds"]) > 0)
        #expect(try await server.send("GET", "/metrics").status == 404)
        #expect(try await server.send("GET", "/healthz").status == 200)
        let metricsClient = try HTTPClient(baseURL: metricsURL)
        #expect(try await metricsClient.get("/healthz").status == 404)
        #expect(try await metricsClient.get("/v1/sessions").status == 404)
        // Scrapes are counted like any request.
        let again = try await Self.scrape(server, from: metricsURL)
        #expect(
            again["navigation_values_http_requests_total{method=\"GET\",route=\"/metrics\",status=\"200\"}"] ?? 0 >= 1)
        let outcome = try await server.stop()
        #expect(outcome.exit == .exited(0))
    }

    @Test func theListenerIsSetFromItsVariablesToo() async throws {
        let server = try await ServeProcess(
            ["--host", "127.0.0.1"],
            environment: ["NAVIGATION_VALUES_METRICS_PORT": "0", "NAVIGATION_VALUES_METRICS_HOST": "localhost"])
        let metricsURL = try #require(server.metricsURL)
        #expect(metricsURL.host == "localhost")
        #expect(try await HTTPClient(baseURL: metricsURL).get("/metrics").status == 200)
        #expect(try await server.send("GET", "/metrics").status == 404)
        _ = try await server.stop()
    }

    @Test func aMetricsHostWithoutAPortIsAUsageError() async throws {
        let outcome = try await run(["serve", "--port", "0", "--metrics-host", "127.0.0.1"])
        #expect(outcome.exit == .exited(2))
        #expect(outcome.stderr.contains("--metrics-host needs --metrics-port"))
        let badPort = try await run(["serve", "--port", "0", "--metrics-port", "70000"])
        #expect(badPort.exit == .exited(2))
        #expect(badPort.stderr.contains("--metrics-port must be an integer from 0 to 65535"))
    }
}
