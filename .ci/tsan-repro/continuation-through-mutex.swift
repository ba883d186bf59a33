// A continuation handed to another thread through a Synchronization.Mutex and resumed there,
// under ThreadSanitizer, with none of the project's code: the sanitizer reports a data race
// between the task's write of its continuation context (withUnsafeContinuation, before the
// closure runs) and UnsafeContinuation.resume's read of it on the other thread. This is the
// shape of TransportStream's waiting reader (the reader parks its continuation in the stream's
// Mutex, the transport's thread takes it out and resumes it).
//
//   swiftc -sanitize=thread -parse-as-library -o /tmp/continuation-through-mutex \
//       continuation-through-mutex.swift && /tmp/continuation-through-mutex
//
// Why: the only thing ordering the write before the read is the Mutex, and its contended path
// (futex in the uninstrumented libswiftSynchronization.so) is invisible to the sanitizer: see
// mutex-contention.swift. A third thread keeps the lock contended. With `pthread` as the argument
// the hand-off goes through a pthread_mutex_t instead, and that report goes away; what can remain
// is the same pair of accesses in the other order (the task's write after the resume's read), the
// resumed-before-await gap that continuation-resumed-before-await.swift shows alone.
import Foundation
import Synchronization

final class Slot: @unchecked Sendable {
    let mutex = Mutex<UnsafeContinuation<Int, Never>?>(nil)
    var plainLock = pthread_mutex_t()
    var plainValue: UnsafeContinuation<Int, Never>?
    let usePthread: Bool
    let isDone = Atomic<Bool>(false)

    init(usePthread: Bool) {
        self.usePthread = usePthread
        pthread_mutex_init(&plainLock, nil)
    }

    func put(_ continuation: UnsafeContinuation<Int, Never>) {
        if usePthread {
            pthread_mutex_lock(&plainLock)
            plainValue = continuation
            pthread_mutex_unlock(&plainLock)
        } else {
            mutex.withLock { $0 = continuation }
        }
    }

    func take() -> UnsafeContinuation<Int, Never>? {
        if usePthread {
            pthread_mutex_lock(&plainLock)
            defer { plainValue = nil; pthread_mutex_unlock(&plainLock) }
            return plainValue
        }
        return mutex.withLock { value in
            defer { value = nil }
            return value
        }
    }
}

@main
struct Repro {
    static func main() async {
        let slot = Slot(usePthread: CommandLine.arguments.dropFirst().first == "pthread")
        // The resumer: takes whatever continuation is parked and resumes it.
        Thread {
            while !slot.isDone.load(ordering: .relaxed) {
                if let continuation = slot.take() { continuation.resume(returning: 1) }
            }
        }.start()
        // A bystander that keeps the lock contended, so that it goes through the kernel.
        Thread {
            while !slot.isDone.load(ordering: .relaxed) { _ = slot.mutex.withLock { $0 != nil } }
        }.start()
        var total = 0
        for _ in 0..<2_000 {
            total += await withUnsafeContinuation { slot.put($0) }
        }
        slot.isDone.store(true, ordering: .relaxed)
        print("done: \(total) resumed (\(slot.usePthread ? "pthread_mutex_t" : "Synchronization.Mutex"))")
    }
}
