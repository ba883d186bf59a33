import Foundation
import NavigationValues
import TestSupport
import Testing

/// Metric labels from a fixed set, never from client input: 300
/// requests with 4 KB methods had grown `/metrics` from 7 KB to 24.6 MB.
@Suite struct MetricLabelTests {
    @Test func invented4KBMethodsAreCountedAsOtherAndMetricsStaySmall() async throws {
        try await withRunningServer { client, _ in
            try await client.send("GET", "/healthz")
            let before = try await client.send("GET", "/metrics").body.count
            for index in 0..<300 {
                let method = String(repeating: "X", count: 4_000) + String(index)
                let answer = try await client.send(method, "/v1/sessions")
                #expect(answer.status == 405)
            }
            let metrics = try await client.send("GET", "/metrics")
            let text = metrics.text
            #expect(metrics.body.count < before + 4_096, "grew from \(before) to \(metrics.body.count) bytes")
            let samples = try parseExposition(text)
            #expect(
                samples[#"navigation_values_http_requests_total{method="OTHER",route="/v1/sessions",status="405"}"#]
                    == 300)
            #expect(!text.contains("XXXX"))
        }
    }
}
