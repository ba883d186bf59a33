import Foundation
import NavigationValues
import NavigationValuesAPI
import TestSupport
import Testing

@Suite struct MetricsTests {
    @Test func metricsCountRequestsByRoutePatternEventsSessionsAndCommits() async throws {
        try await withRunningServer { client, server in
            let created = try await client.send("POST", "/v1/sessions", json: ["root": ["name": "Home"]])
            let id = try #require(created.json?["id"]?.stringValue)
            let token = try #require(created.json?["token"]?.stringValue)
            try await client.send("POST", "/v1/sessions/\(id)/push", json: ["name": "Detail"], token: token)
            try await client.send("GET", "/v1/sessions/\(id)", token: token)
            try await client.send("GET", "/no/such/route")
            let stream = try SSEClient(
                port: server.port, path: "/v1/sessions/\(id)/events", headers: ["Authorization": "Bearer \(token)"])
            defer { stream.close() }
            #expect(await stream.status() == 200)

            let answer = try await client.send("GET", "/metrics")
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
            let text = String(decoding: answer.body, as: UTF8.self)
            let samples = try parseExposition(text)
            #expect(
                samples[#"navigation_values_http_requests_total{method="POST",route="/v1/sessions",status="201"}"#] == 1
            )
            #expect(
                samples[
                    #"navigation_values_http_requests_total{method="POST",route="/v1/sessions/{id}/push",status="201"}"#
                ] == 1)
            #expect(
                samples[#"navigation_values_http_requests_total{method="GET",route="/v1/sessions/{id}",status="200"}"#]
                    == 1)
            #expect(
                samples[#"navigation_values_http_requests_total{method="GET",route="unmatched",status="404"}"#] == 1)
            #expect(
                samples[#"navigation_values_http_request_duration_seconds_count{method="POST",route="/v1/sessions"}"#]
                    == 1)
            #expect(
                samples[
                    #"navigation_values_http_request_duration_seconds_bucket{method="POST",route="/v1/sessions",le="+Inf"}"#
                ] == 1)
            #expect(samples["navigation_values_events_appended_total"] == 2)
            #expect(samples["navigation_values_sessions_loaded"] == 1)
            #expect(samples["navigation_values_sessions_hot"] == 1)
            #expect(samples["navigation_values_subscribers"] == 1)
            #expect(samples["navigation_values_subscribers_dropped_total"] == 0)
            #expect(samples[#"navigation_values_store_commits_total{result="committed"}"#] == 2)
            #expect(samples[#"navigation_values_store_commit_duration_seconds_bucket{le="+Inf"}"#] == 2)
            #expect(samples["navigation_values_store_commit_duration_seconds_count"] == 2)
            #expect(samples["navigation_values_store_batch_size_sum"] == 2)
            #expect((samples["navigation_values_store_batch_size_count"] ?? 0) >= 1)
            #expect((samples["navigation_values_store_batch_size_max"] ?? 0) >= 1)
        }
    }

    @Test func pagesWrittenRiseWithEveryCommittedMutation() async throws {
        try await withRunningServer { client, _ in
            func pagesWritten() async throws -> Double {
                let text = String(decoding: try await client.send("GET", "/metrics").body, as: UTF8.self)
                return try #require(try parseExposition(text)["navigation_values_store_pages_written_total"])
            }
            let created = try await client.send("POST", "/v1/sessions", json: ["root": ["name": "Home"]])
            let id = try #require(created.json?["id"]?.stringValue)
            let token = try #require(created.json?["token"]?.stringValue)
            let afterCreate = try await pagesWritten()
            #expect(afterCreate >= 1)
            try await client.send("POST", "/v1/sessions/\(id)/push", json: ["name": "Detail"], token: token)
            // The push's state rows are written behind its event, within 50 ms: wait for them,
            // so that what follows counts the read's pages alone.
            for _ in 0..<200 {
                let text = String(decoding: try await client.send("GET", "/metrics").body, as: UTF8.self)
                if try parseExposition(text)["navigation_values_store_state_lag_events"] == 0 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            let afterPush = try await pagesWritten()
            #expect(afterPush > afterCreate)
            // A read writes nothing.
            try await client.send("GET", "/v1/sessions/\(id)", token: token)
            #expect(try await pagesWritten() == afterPush)
        }
    }

    @Test func histogramBucketsAreCumulativeAndEndWithTheCount() async throws {
        try await withRunningServer { client, _ in
            for _ in 0..<5 { try await client.send("GET", "/healthz") }
            let text = String(decoding: try await client.send("GET", "/metrics").body, as: UTF8.self)
            let buckets = text.split(separator: "\n").filter {
                $0.hasPrefix(#"navigation_values_http_request_duration_seconds_bucket{method="GET",route="/healthz","#)
            }
            let counts = buckets.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }
            #expect(counts.count == Metrics.latencyBucketBounds.count + 1)
            #expect(counts == counts.sorted())
            #expect(counts.last == 5)
        }
    }

    @Test func everyFamilyHasHelpAndTypeBeforeItsSamples() async throws {
        try await withRunningServer { client, _ in
            try await client.send("POST", "/v1/sessions", json: [:])
            let text = String(decoding: try await client.send("GET", "/metrics").body, as: UTF8.self)
            var typed: [String: String] = [:]
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ", maxSplits: 3)
                if line.hasPrefix("# TYPE ") {
                    typed[String(parts[2])] = String(parts[3])
                } else if !line.hasPrefix("#") {
                    let name = String(line.prefix { $0 != "{" && $0 != " " })
                    let family = ["_bucket", "_sum", "_count"].reduce(name) { name, suffix in
                        name.hasSuffix(suffix) && typed[String(name.dropLast(suffix.count))] != nil
                            ? String(name.dropLast(suffix.count)) : name
                    }
                    #expect(typed[family] != nil, "\(name) has no # TYPE line before it")
                }
            }
            #expect(typed["navigation_values_http_request_duration_seconds"] == "histogram")
            #expect(typed["navigation_values_store_commit_duration_seconds"] == "histogram")
            #expect(typed["navigation_values_subscribers"] == "gauge")
        }
    }
}

/// Sample lines of a Prometheus text exposition, by name and labels; throws on a malformed line.
func parseExposition(_ text: String) throws -> [String: Double] {
    var samples: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let match = line.wholeMatch(of: /([a-z_]+(?:\{.*\})?) ([0-9.e+-]+|\+Inf|NaN)/),
            let value = Double(match.output.2)
        else {
            throw ExpositionError(line: String(line))
        }
        samples[String(match.output.1)] = value
    }
    return samples
}

struct ExpositionError: Error {
    var line: String
}
