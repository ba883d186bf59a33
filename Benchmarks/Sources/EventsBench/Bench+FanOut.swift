import BenchmarkSupport
import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesSessions

extension Bench {
    /// When each push was sent and when its 2xx was read, by the event seq it created.
    private struct PushTimes {
        var sent: [Int64: UInt64] = [:]
        var acknowledged: [Int64: UInt64] = [:]
        /// Send to 2xx read, in push order.
        var roundTrips: [UInt64] = []
    }

    /// One session, 1,000 subscribers: time from each push's 2xx to the event at every subscriber.
    ///
    /// Two rounds of 50 pushes on one keep-alive connection: paced (the next push is sent once
    /// every subscriber has the previous event), then back to back (the next push as soon as the
    /// 2xx is read, so fan-outs overlap). The paced round's figure with a threshold is the time
    /// from each push's 2xx to its event at the last of the subscribers (p99 over the pushes).
    static func fanOut(in folder: URL) async throws {
        say("\n== Fan-out latency: 1 session, \(fanOutSubscribers) SSE subscribers, one poll(2) reader thread ==")
        try await withServer(folder.appendingPathComponent("fanout.sqlite").path) { server in
            let client = try HTTPConnection(port: server.port)
            let session = try createSession(client)
            // `?after=1`: every event after session.created, whenever the stream starts.
            let reader = try StreamReader.open(
                count: fanOutSubscribers, port: server.port, path: "/v1/sessions/\(session.id)/events?after=1",
                token: session.token, expectedEvents: fanOutPushes * 2)
            reader.start()
            let times: PushTimes
            do {
                try reader.waitForHeads(timeout: .seconds(30))
                try wait("\(fanOutSubscribers) subscribers on the server", timeout: .seconds(10)) {
                    try subscriberCount(client) == fanOutSubscribers
                }
                times = try push(client, session: session, reader: reader)
            } catch {
                _ = reader.stop()
                throw error
            }
            let isDeliveryRight = report(reader.stop(), times)
            say("  dropped subscribers: \(try droppedSubscriberCount(client))")
            try wait("subscribers released", timeout: .seconds(10)) { try subscriberCount(client) == 0 }
            guard isDeliveryRight else { throw BenchError("fan-out delivery check failed") }
        }
        try fanOutFloor()
    }

    /// Sends the pushes one at a time; during the paced round, waits for each fan-out to finish.
    private static func push(
        _ client: HTTPConnection, session: (id: String, token: String), reader: StreamReader
    ) throws -> PushTimes {
        var times = PushTimes()
        let before = ThreadCPU.now()
        for push in 0..<(fanOutPushes * 2) {
            let sent = ProcessFigures.now()
            let reply = try client.send(
                "POST", "/v1/sessions/\(session.id)/push", token: session.token,
                json: #"{"name":"Detail \#(push)","values":{"index":\#(push)}}"#)
            guard reply.status == 201, let version = reply.json?["version"]?.integerValue else {
                throw BenchError(
                    "push \(push) answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
            }
            guard version == Int64(push) + 2 else { throw BenchError("push \(push) got version \(version)") }
            times.sent[version] = sent
            times.acknowledged[version] = reply.readAt
            times.roundTrips.append(reply.readAt - sent)
            if push < fanOutPushes {
                try reader.waitForEvents(fanOutSubscribers * (push + 1), timeout: .seconds(10))
            }
            if push == fanOutPushes - 1 { reportCPU(since: before) }
        }
        try reader.waitForEvents(fanOutSubscribers * fanOutPushes * 2, timeout: .seconds(60))
        return times
    }

    /// Prints the CPU time the paced round took per delivery, by kind of thread: the server's
    /// event loops and workers, the subscribers' reader, and the rest (this thread, pushing and
    /// waiting, and the runtime's). Client and server share the cores, so what the reader spends
    /// per delivery is CPU the server's sends cannot have, and the reverse.
    private static func reportCPU(since before: ThreadCPU) {
        let deliveries = Double(fanOutSubscribers * fanOutPushes)
        let spent = ThreadCPU.now().since(before).sorted { $0.value > $1.value }
        let figures = spent.map { String(format: "%@ %.2f", $0.key, Double($0.value) / 1_000 / deliveries) }
        say("  CPU per delivery in the paced round, µs by thread: " + figures.joined(separator: ", "))
    }

    /// Checks every stream's ids and prints the latencies; returns whether the check passed.
    private static func report(_ streams: [EventStreamParser], _ times: PushTimes) -> Bool {
        let expected = Array(Int64(2)...Int64(fanOutPushes * 2 + 1))
        var paced: [UInt64] = []
        var pacedFromSend: [UInt64] = []
        var burst: [UInt64] = []
        // The paced pushes' events at the last subscriber that got them, by seq.
        var lastArrival: [Int64: UInt64] = [:]
        var early = 0
        var wrong: [String] = []
        for (index, stream) in streams.enumerated() {
            guard stream.ids == expected else {
                wrong.append("subscriber \(index): \(stream.ids.count) events, \(firstMismatch(stream.ids, expected))")
                continue
            }
            for (id, arrival) in zip(stream.ids, stream.arrivals) {
                guard let ack = times.acknowledged[id], let sent = times.sent[id] else { continue }
                if arrival < ack { early += 1 }
                let latency = arrival > ack ? arrival - ack : 0
                if id - 2 < Int64(fanOutPushes) {
                    paced.append(latency)
                    lastArrival[id] = max(lastArrival[id] ?? 0, arrival)
                    pacedFromSend.append(arrival > sent ? arrival - sent : 0)
                } else {
                    burst.append(latency)
                }
            }
        }
        say(
            wrong.isEmpty
                ? "  check: each of \(fanOutSubscribers) subscribers got events 2...\(expected.count + 1) exactly once, in order: OK"
                : "  check FAILED for \(wrong.count) subscribers; first: \(wrong[0])")
        summarise("paced (next push after full fan-out)", paced, threshold: "maxPacedFanOutP99Milliseconds")
        if wrong.isEmpty {
            let toLast = lastArrival.compactMap { id, arrival -> UInt64? in
                guard let ack = times.acknowledged[id] else { return nil }
                return arrival > ack ? arrival - ack : 0
            }.sorted()
            say("    2xx -> event at the last of the \(fanOutSubscribers) subscribers, per push: \(percentiles(toLast))")
            thresholds.check(
                "maxLastSubscriberFanOutP99Milliseconds", Double(Statistics.quantile(toLast, 0.99)) / 1e6,
                "    p99 over \(toLast.count) pushes (load \(ProcessFigures.loadAverage()))", unit: "ms", decimals: 3)
        }
        summarise("    push request sent -> event at subscriber", pacedFromSend, threshold: nil)
        summarise("back to back (fan-outs overlap)", burst, threshold: "maxBackToBackFanOutP99Milliseconds")
        let pacedTrips = times.roundTrips.prefix(fanOutPushes).sorted()
        let burstTrips = Array(times.roundTrips.dropFirst(fanOutPushes)).sorted()
        say(
            "  push round trip (send to 2xx read): paced \(percentiles(pacedTrips)); back to back \(percentiles(burstTrips))"
        )
        say("  deliveries that beat their push's 2xx (counted as 0): \(early) of \(paced.count + burst.count)")
        return wrong.isEmpty
    }

    /// Prints the latencies' percentiles; checks the p99 against `threshold` when one is named.
    private static func summarise(_ label: String, _ latencies: [UInt64], threshold: String?) {
        let sorted = latencies.sorted()
        guard let threshold else {
            say("\(label): \(percentiles(sorted))")
            return
        }
        say("  \(label): \(fanOutPushes) pushes x \(fanOutSubscribers) subscribers = \(sorted.count) deliveries")
        say("    2xx -> event at subscriber: \(percentiles(sorted))")
        let p99 = Double(Statistics.quantile(sorted, 0.99)) / 1e6
        thresholds.check(threshold, p99, "    p99", unit: "ms", decimals: 3)
    }

    private static func percentiles(_ sorted: [UInt64]) -> String {
        "p50 \(Statistics.milliseconds(Statistics.quantile(sorted, 0.5))), p99 \(Statistics.milliseconds(Statistics.quantile(sorted, 0.99))), "
            + "max \(Statistics.milliseconds(sorted.last ?? 0))"
    }

    private static func firstMismatch(_ ids: [Int64], _ expected: [Int64]) -> String {
        for (index, id) in ids.enumerated() where index >= expected.count || id != expected[index] {
            let wanted = index < expected.count ? String(expected[index]) : "nothing"
            return "first mismatch at position \(index): got \(id), expected \(wanted)"
        }
        return "missing events after position \(ids.count)"
    }
}
