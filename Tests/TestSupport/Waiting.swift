import Foundation

/// Thrown when something a test waits for did not happen in time; says what it waited for.
///
/// ```swift
/// guard let line else { throw TestTimeout("no 'listening on' line within 30 s") }
/// ```
public struct TestTimeout: Error, CustomStringConvertible {
    /// What was awaited, and for how long.
    public var description: String

    /// A timeout that says what was awaited.
    public init(_ description: String = "timed out") {
        self.description = description
    }
}

/// Runs `body`, throwing ``TestTimeout`` when it takes longer than `timeout` (after calling
/// `onTimeout`, which can kill what `body` waits on). `body` is cancelled on timeout.
///
/// ```swift
/// let lines = try await withTimeout(.seconds(60)) { await collectLines() }
/// ```
public func withTimeout<T: Sendable>(
    _ timeout: Duration, _ what: String = "the operation", onTimeout: @escaping @Sendable () -> Void = {},
    _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            onTimeout()
            throw TestTimeout("\(what) did not finish within \(timeout)")
        }
        return result
    }
}

/// Polls `condition` until it holds or `timeout` passes, and returns whether it held: for state
/// that has no event to wait on (a counter on a server, say). Never a sleep to synchronise: it
/// returns as soon as the condition holds.
///
/// ```swift
/// #expect(try await eventually { server.openConnectionCount == 0 })
/// ```
public func eventually(
    timeout: Duration = .seconds(30), pollingEvery interval: Duration = .milliseconds(2),
    _ condition: () async throws -> Bool
) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: interval)
    }
    return try await condition()
}

/// Like ``eventually(timeout:pollingEvery:_:)``, but throws ``TestTimeout`` when the condition
/// never held.
public func waitUntil(
    _ what: String = "the condition", timeout: Duration = .seconds(30), _ condition: () async throws -> Bool
) async throws {
    guard try await eventually(timeout: timeout, condition) else {
        throw TestTimeout("\(what) did not hold within \(timeout)")
    }
}

/// The first element of `stream`, or ``TestTimeout`` after `timeout` (or when it ends first).
public func first<T: Sendable>(of stream: AsyncStream<T>, timeout: Duration = .seconds(30)) async throws -> T {
    guard let value = try await collect(1, of: stream, timeout: timeout).first else {
        throw TestTimeout("the stream ended before its first element")
    }
    return value
}

/// The first `count` elements of `stream`, read by one task; throws ``TestTimeout`` when they
/// do not all arrive within `timeout`.
public func collect<T: Sendable>(_ count: Int, of stream: AsyncStream<T>, timeout: Duration = .seconds(30)) async throws
    -> [T]
{
    let values = try await withTimeout(timeout, "\(count) elements of the stream") {
        var values: [T] = []
        for await value in stream {
            values.append(value)
            if values.count == count { break }
        }
        return values
    }
    guard values.count == count else {
        throw TestTimeout("the stream ended after \(values.count) of \(count) elements")
    }
    return values
}

/// Runs blocking work (socket reads, waiting for a child) on a thread of its own, never on the
/// cooperative pool that in-process servers need, and returns its result.
///
/// ```swift
/// let response = try await offload { try client.readResponse() }
/// ```
public func offload<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try work() }) }
        thread.start()
    }
}
