// A continuation resumed on another thread before its task reaches the await, under
// ThreadSanitizer, with none of the project's code: the sanitizer reports a data race between
// UnsafeContinuation.resume (reading the task's continuation context) and the resumed task's
// next use of that memory (its async frames are carved from the same task allocator slab).
//
//   swiftc -sanitize=thread -parse-as-library -o /tmp/resumed-before-await \
//       continuation-resumed-before-await.swift && /tmp/resumed-before-await
//
// Why: resume calls swift_continuation_resume, which tells the sanitizer "release" on the task;
// the task's side is swift_continuation_await in libswift_Concurrency.so. When it finds the
// continuation still pending it suspends, and the executor that later runs the task tells the
// sanitizer "acquire": that pairing is seen. When it finds the continuation already resumed (the
// other thread was quicker than the closure's return) it continues at once after an atomic load
// in the uninstrumented runtime, with no "acquire": the sanitizer sees nothing order the resuming
// thread's accesses before the task's. The project hits this wherever a blocking worker resumes
// a continuation (the client's SocketTransport, TransportStream's waiting reader).
//
// Here the closure sleeps a little after handing the continuation over, so that the other thread
// resumes it first; usleep is no synchronization to the sanitizer. Passing `late` makes the
// thread wait until the task has awaited (the pending path), and the report goes away.
import Foundation

final class Handoff: @unchecked Sendable {
    let continuation: UnsafeContinuation<Int, Never>
    let value: Int
    init(_ continuation: UnsafeContinuation<Int, Never>, _ value: Int) {
        self.continuation = continuation
        self.value = value
    }
}

/// Some async work after the await: new frames on the task's allocator, written.
@inline(never)
func touchFrames(_ depth: Int, _ value: Int) async -> Int {
    var local = [value, depth]
    if depth > 0 { local[0] = await touchFrames(depth - 1, value &+ 1) }
    return local[0] &+ local[1]
}

@main
struct Repro {
    static func main() async {
        let late = CommandLine.arguments.dropFirst().first == "late"
        var total = 0
        for round in 0..<200 {
            let value = await withUnsafeContinuation { (continuation: UnsafeContinuation<Int, Never>) in
                let handoff = Handoff(continuation, round)
                let thread = Thread {
                    if late { usleep(20_000) }  // after the closure returned and the task suspended
                    handoff.continuation.resume(returning: handoff.value)
                }
                thread.start()
                if !late { usleep(2_000) }  // the thread resumes first
            }
            total &+= await touchFrames(8, value)
        }
        print("done: \(total) (\(late ? "resumed after the await" : "resumed before the await"))")
    }
}
