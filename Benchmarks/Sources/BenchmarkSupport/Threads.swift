import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Names the calling thread as `/proc` shows it (15 bytes at most), so that its CPU time can be
/// read apart (`/proc/PID/task/*/comm`). Foundation's `Thread.name` does not reach the kernel here,
/// and Glibc's module hides `pthread_setname_np`: it is looked up instead.
public func nameCurrentThread(_ name: String) {
    typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else { return }
    _ = unsafeBitCast(symbol, to: SetName.self)(pthread_self(), String(name.prefix(15)))
}

/// Runs `work(index)` on `count` threads of their own (blocking sockets stay off the cooperative
/// pool an in-process server runs on) and returns their results in index order.
public func onThreads<T: Sendable>(_ count: Int, _ work: @escaping @Sendable (Int) -> T) async -> [T] {
    let results = Mutex<[Int: T]>([:])
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            let thread = Thread {
                let result = work(index)
                results.withLock { $0[index] = result }
                group.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        group.notify(queue: .global()) { continuation.resume() }
    }
    return results.withLock { dictionary in (0..<count).compactMap { dictionary[$0] } }
}
