import BenchmarkSupport
import Foundation
import HeapFigures
import NavigationValuesAPI
import NavigationValuesSessions

extension Bench {
    /// 10,000 idle SSE subscribers on one session, held by a child process; the server process's
    /// VmRSS before and after.
    static func idle(in folder: URL) async throws {
        say("== Idle subscribers: \(idleSubscribers) SSE streams held at once ==")
        try await withServer(folder.appendingPathComponent("idle.sqlite").path) { server in
            let client = try HTTPConnection(port: server.port)
            let session = try createSession(client)
            let before = try ProcessFigures.residentKiB()
            let heapBefore = nv_heap_bytes_in_use()
            let heapFromSystemBefore = nv_heap_bytes_from_system()
            let start = ContinuousClock.now
            let child = try HeldSubscribers.Child(
                port: server.port, count: idleSubscribers, session: session.id, token: session.token)
            do {
                try child.waitUntilReady(timeout: .seconds(120))
                try wait("\(idleSubscribers) subscribers on the server", timeout: .seconds(30)) {
                    try subscriberCount(client) == idleSubscribers
                }
            } catch {
                try? child.release(timeout: .seconds(10))
                throw error
            }
            let connected = ContinuousClock.now - start
            let after = try ProcessFigures.residentKiB()
            let heapAfter = nv_heap_bytes_in_use()
            let heapFromSystemAfter = nv_heap_bytes_from_system()
            let perSubscriber = Double(after - before) * 1024 / Double(idleSubscribers)
            say(
                "  all \(idleSubscribers) connected, 200 heads read, subscribers on the server = \(try subscriberCount(client)), in \(Statistics.format(connected))"
            )
            say(
                "  server VmRSS before: \(Statistics.mebibytes(before))  with \(idleSubscribers) subscribers: \(Statistics.mebibytes(after))"
            )
            say(
                String(
                    format: "  per subscriber: %.1f KiB (server side: connection, task, stream buffer)",
                    perSubscriber / 1024))
            // What the code holds per stream, apart from the allocator's pages: a change here is a
            // change in what a stream allocates; a change in VmRSS alone is layout.
            let heapPerSubscriber = Double(Int64(heapAfter) - Int64(heapBefore)) / Double(idleSubscribers)
            let heapAdded = Int((Int64(heapAfter) - Int64(heapBefore)) / 1024)
            let heapFromSystemAdded = Int((Int64(heapFromSystemAfter) - Int64(heapFromSystemBefore)) / 1024)
            say(
                "  heap in use +\(Statistics.mebibytes(heapAdded)), taken from the system +\(Statistics.mebibytes(heapFromSystemAdded))"
            )
            thresholds.check(
                "maxIdleSubscriberHeapBytes", heapPerSubscriber, "  heap in use per idle subscriber", unit: "B",
                decimals: 0)
            thresholds.check("maxIdleSubscriberKiB", perSubscriber / 1024, "  per idle subscriber", unit: "KiB")
            thresholds.check(
                "maxIdleStreamsMegabytes", Double(after - before) / 1024,
                "  \(idleSubscribers) idle streams, server VmRSS added (load \(ProcessFigures.loadAverage()))", unit: "MB")
            say("  (the client sockets live in a child process, `events-bench hold`: 10,000 connections need")
            say("   20,000+ descriptors with both ends in one process, over the 20,000 hard limit; so the")
            say("   figure is the server's own memory, clients not included)")
            // Still answering while holding them?
            let probeStart = ContinuousClock.now
            let probe = try client.send("GET", "/v1/sessions/\(session.id)", token: session.token)
            guard probe.status == 200 else { throw BenchError("GET session while holding answered \(probe.status)") }
            say("  GET /v1/sessions/{id} while holding them: \(Statistics.format(ContinuousClock.now - probeStart))")
            let releaseStart = ContinuousClock.now
            try child.release(timeout: .seconds(30))
            try wait("subscribers released", timeout: .seconds(30)) { try subscriberCount(client) == 0 }
            let released = try ProcessFigures.residentKiB()
            say(
                "  released: subscribers back to 0 in \(Statistics.format(ContinuousClock.now - releaseStart)), VmRSS then \(Statistics.mebibytes(released))"
            )
        }
    }
}
