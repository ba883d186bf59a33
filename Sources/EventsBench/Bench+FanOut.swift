import Foundation
import NavigationValues
import NavigationValuesAPI

extension Bench {
    /// One session, 1,000 subscribers: time from each push's 2xx to the event at every subscriber.
    ///
    /// Two rounds of 200 pushes on one keep-alive connection: paced (the next push is sent once
    /// every subscriber has the previous event), then back to back (the next push as soon as the
    /// 2xx is read, so fan-outs overlap).
    static func fanOut(in folder: URL) async throws {
        say("\n== Fan-out latency: 1 session, \(fanOutSubscribers) SSE subscribers, one poll(2) reader thread ==")
        try await withServer(folder.appendingPathComponent("fanout.sqlite").path) { server in
            let client = try RawHTTPClient(port: server.port)
            let session = try createSession(client)
            let totalPushes = fanOutPushes * 2
            // `?after=1`: every event after session.created, whenever the stream starts.
            let reader = try StreamReader.open(
                count: fanOutSubscribers, port: server.port, path: "/v1/sessions/\(session.id)/events?after=1",
                token: session.token, expectedEvents: totalPushes)
            reader.start()
            var acknowledged: [Int64: UInt64] = [:]
            var sentAt: [Int64: UInt64] = [:]
            var roundTrips: [UInt64] = []
            do {
                try reader.waitForHeads(timeout: .seconds(30))
                try wait("\(fanOutSubscribers) subscribers in the hub", timeout: .seconds(10)) {
                    server.hub.subscriberCount == fanOutSubscribers
                }
                for push in 0..<totalPushes {
                    let sent = ProcessFigures.now()
                    let reply = try client.send(
                        "POST", "/v1/sessions/\(session.id)/push", token: session.token,
                        json: #"{"name":"Detail \#(push)","values":{"index":\#(push)}}"#)
                    guard reply.status == 201, let version = reply.json?["version"]?.integerValue else {
                        throw BenchError(
                            "push \(push) answered \(reply.status): \(String(decoding: reply.body, as: UTF8.self))")
                    }
                    guard version == Int64(push) + 2 else { throw BenchError("push \(push) got version \(version)") }
                    acknowledged[version] = reply.readAt
                    sentAt[version] = sent
                    roundTrips.append(reply.readAt - sent)
                    if push < fanOutPushes {
                        try reader.waitForEvents(fanOutSubscribers * (push + 1), timeout: .seconds(10))
                    }
                }
                try reader.waitForEvents(fanOutSubscribers * totalPushes, timeout: .seconds(60))
            } catch {
                _ = reader.stop()
                throw error
            }
            let streams = reader.stop()
            let expected = Array(Int64(2)...Int64(totalPushes + 1))
            var paced: [UInt64] = []
            var burst: [UInt64] = []
            var pacedFromSend: [UInt64] = []
            var early = 0
            var wrong: [String] = []
            for (index, stream) in streams.enumerated() {
                if stream.ids != expected {
                    wrong.append(
                        "subscriber \(index): \(stream.ids.count) events, first mismatch at \(firstMismatch(stream.ids, expected))"
                    )
                    continue
                }
                for (id, arrival) in zip(stream.ids, stream.arrivals) {
                    guard let ack = acknowledged[id] else { continue }
                    if arrival < ack { early += 1 }
                    let latency = arrival > ack ? arrival - ack : 0
                    if id - 2 < Int64(fanOutPushes) {
                        paced.append(latency)
                        if let sent = sentAt[id] { pacedFromSend.append(arrival - min(arrival, sent)) }
                    } else {
                        burst.append(latency)
                    }
                }
            }
            say(
                wrong.isEmpty
                    ? "  check: every one of \(fanOutSubscribers) subscribers got events 2...\(totalPushes + 1) exactly once, in order: OK"
                    : "  check FAILED for \(wrong.count) subscribers; first: \(wrong[0])")
            summarise("paced (next push after full fan-out)", paced)
            let fromSend = pacedFromSend.sorted()
            say(
                "    push request sent -> event at subscriber: p50 \(milliseconds(quantile(fromSend, 0.5))), p99 \(milliseconds(quantile(fromSend, 0.99))), max \(milliseconds(fromSend.last ?? 0))"
            )
            summarise("back to back (fan-outs overlap)", burst)
            let pacedTrips = roundTrips.prefix(fanOutPushes).sorted()
            let burstTrips = roundTrips.dropFirst(fanOutPushes).sorted()
            say(
                "  push round trip (send to 2xx read): paced p50 \(milliseconds(quantile(pacedTrips, 0.5))), p99 \(milliseconds(quantile(pacedTrips, 0.99)));"
                    + " back to back p50 \(milliseconds(quantile(Array(burstTrips), 0.5))), p99 \(milliseconds(quantile(Array(burstTrips), 0.99)))"
            )
            say(
                "  events that reached a subscriber before their push's 2xx was read (counted as 0): \(early) of \(paced.count + burst.count)"
            )
            say("  dropped subscribers: \(server.hub.droppedSubscriberCount)")
            try wait("subscribers released", timeout: .seconds(10)) { server.hub.subscriberCount == 0 }
            guard wrong.isEmpty else { throw BenchError("fan-out delivery check failed") }
        }
    }

    private static func summarise(_ label: String, _ latencies: [UInt64]) {
        let sorted = latencies.sorted()
        let verdict = quantile(sorted, 0.99) < 20_000_000 ? "under" : "OVER"
        say("  \(label): \(fanOutPushes) pushes x \(fanOutSubscribers) subscribers = \(sorted.count) deliveries")
        say(
            "    2xx -> event at subscriber: p50 \(milliseconds(quantile(sorted, 0.5))), p99 \(milliseconds(quantile(sorted, 0.99))), max \(milliseconds(sorted.last ?? 0))  (goal p99 < 20 ms: \(verdict))"
        )
    }

    private static func firstMismatch(_ ids: [Int64], _ expected: [Int64]) -> String {
        for (index, id) in ids.enumerated() where index >= expected.count || id != expected[index] {
            return
                "position \(index): got \(id), expected \(index < expected.count ? String(expected[index]) : "nothing")"
        }
        return "missing events after position \(ids.count)"
    }
}
