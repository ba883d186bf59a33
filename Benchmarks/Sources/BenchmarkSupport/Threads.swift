import Foundation
import Synchronization

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
