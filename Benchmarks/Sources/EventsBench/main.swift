// events-bench: event streams and replay, measured on an in-process server.
//
//     swift run --package-path Benchmarks -c release events-bench [--event-loops N] [idle] [fanout] [replay]
//
// Starts NavigationValuesServer on 127.0.0.1 (port 0) with a SQLite file in a temp folder and prints:
//   1. fan-out latency: one session, 1,000 SSE subscribers read by one poll(2) thread, 50 pushes;
//      the time from each push's 2xx to the event at every subscriber (p50/p99/max) and at the
//      last subscriber (p99 over the pushes), a delivery check, the CPU per delivery by kind of
//      thread, and the same figure for a floor (two threads that only send, to the same reader);
//   2. idle subscribers: 10,000 streams held at once and the server's resident memory they add;
//   3. replay speed: a session of 20,000 events rebuilt from the file, with and without snapshots.
// The idle phase runs first so its memory figures start from a fresh server; naming phases
// runs only those (for profiling one of them). The figures are compared with
// Benchmarks/Thresholds/events.json (exit 1 when one is not met).
//
// `events-bench hold PORT COUNT SESSION TOKEN` is the child that holds the idle subscribers.
import BenchmarkSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "hold" {
    HeldSubscribers.runChild(Array(CommandLine.arguments.dropFirst(2)))
}

do {
    try await Bench.run(Array(CommandLine.arguments.dropFirst()))
    Bench.thresholds.exitWithVerdict()
} catch {
    FileHandle.standardError.write(Data("events-bench: \(error)\n".utf8))
    exit(1)
}
