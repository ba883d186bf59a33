// Synchronization.Mutex under ThreadSanitizer, with none of the project's code: two threads
// increment one counter, only ever inside mutex.withLock, and the sanitizer reports a data race
// once the lock is contended.
//
//   swiftc -sanitize=thread -o /tmp/mutex-contention mutex-contention.swift && /tmp/mutex-contention
//
// Why: withLock's fast path (a compare-exchange on the lock word, inlined into this file and so
// instrumented) is seen as an acquire and a release; its slow path, taken when the lock is
// contended, is _MutexHandle._lockSlow/_unlockSlow in libswiftSynchronization.so, which waits
// and wakes with futex(FUTEX_LOCK_PI/FUTEX_UNLOCK_PI): the kernel hands the lock over, the
// runtime library is not instrumented, and the sanitizer sees no synchronization at all. The same
// program with `pthread` (pass `pthread` as the argument) is silent: the sanitizer intercepts
// pthread_mutex_lock/unlock.
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

final class Counter: @unchecked Sendable {
    var value = 0
}

let counter = Counter()
let mutex = Mutex<Void>(())
nonisolated(unsafe) var plainLock = pthread_mutex_t()
pthread_mutex_init(&plainLock, nil)
let usePthread = CommandLine.arguments.dropFirst().first == "pthread"
let rounds = 200_000

func work() {
    for _ in 0..<rounds {
        if usePthread {
            pthread_mutex_lock(&plainLock)
            counter.value += 1
            pthread_mutex_unlock(&plainLock)
        } else {
            mutex.withLock { _ in counter.value += 1 }
        }
    }
}

var threads: [pthread_t] = []
for _ in 0..<4 {
    var thread = pthread_t()
    pthread_create(&thread, nil, { _ in work(); return nil }, nil)
    threads.append(thread)
}
for thread in threads { pthread_join(thread, nil) }
print("counter \(counter.value) of \(4 * rounds) (\(usePthread ? "pthread_mutex_t" : "Synchronization.Mutex"))")
