import CHTTPSystem
import Dispatch
import Foundation
import Synchronization

/// The threads a server runs its handlers and streams on: a `TaskExecutor` that handler tasks
/// prefer, so that request work (parsing bodies, actors, rendering, encoding) runs neither on
/// the I/O loops nor on the process's shared cooperative pool.
///
/// The loops stay free for I/O, and one server's heavy requests compete with its own other
/// requests only, as its connections do, whatever else the process runs. Default actors that a
/// handler calls run here too (SE-0417). Work enqueued before `start()` or after `stop()` runs on
/// the global concurrent executor.
final class WorkerPool: TaskExecutor, @unchecked Sendable {
    // @unchecked: `threads` is set in `start()` and read in `stop()`, both called by the server
    // under its phase lock, never concurrently; the queue is behind `state`.

    private struct State {
        var jobs: [UnownedJob] = []
        var head = 0
        var isRunning = false
    }

    private let state = Mutex(State())
    private let available = DispatchSemaphore(value: 0)
    private let count: Int
    private let name: String
    private var threads: [Thread] = []
    private let finished = DispatchGroup()

    /// A pool of `count` threads named `name-N` (the kernel keeps 15 bytes of a thread's name),
    /// started by `start()`.
    init(count: Int, name: String) {
        self.count = max(1, count)
        self.name = name
    }

    func start() {
        state.withLock { $0.isRunning = true }
        for index in 0..<count {
            finished.enter()
            let threadName = "\(name)-\(index)"
            let thread = Thread { [self] in
                _ = chttp_set_thread_name(threadName)
                work()
                finished.leave()
            }
            thread.start()
            threads.append(thread)
        }
    }

    /// Lets the threads finish the jobs queued, then ends them; later jobs run on the global executor.
    func stop() async {
        let wasRunning = state.withLock { state -> Bool in
            defer { state.isRunning = false }
            return state.isRunning
        }
        guard wasRunning else { return }
        for _ in 0..<count { available.signal() }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            finished.notify(queue: .global()) { continuation.resume() }
        }
        threads = []
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queued = state.withLock { state -> Bool in
            guard state.isRunning else { return false }
            state.jobs.append(job)
            return true
        }
        if queued {
            available.signal()
        } else {
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }

    /// A worker thread: takes jobs until the pool stops and its queue is empty.
    private func work() {
        while true {
            available.wait()
            let next = state.withLock { state -> UnownedJob?? in
                guard state.head < state.jobs.count else { return state.isRunning ? .some(nil) : nil }
                let job = state.jobs[state.head]
                state.head += 1
                if state.head == state.jobs.count || state.head > 1_024 {
                    state.jobs.removeFirst(state.head)
                    state.head = 0
                }
                return .some(job)
            }
            guard let next else { return }  // stopped, nothing left
            next?.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
