#if canImport(Glibc)
    import Glibc
#endif

/// An error from a system call on a socket: the call's name and its `errno`.
///
/// ```swift
/// do { try await server.start() } catch let error as SocketError where error.errno == EADDRINUSE { … }
/// ```
public struct SocketError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call that failed, such as `"bind"`.
    public var call: String
    /// The `errno` it reported.
    public var errno: Int32

    /// Creates an error for a failed system call.
    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String {
        "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// The outcome of a non-blocking call: done, or it would have blocked (`EAGAIN`).
enum IOResult<Value> {
    case processed(Value)
    case wouldBlock
}

/// Runs one system call, the one way every syscall is made (as NIO's `System.swift`):
/// `EINTR` is retried, `EAGAIN`/`EWOULDBLOCK` comes back as `.wouldBlock`, any other
/// failure throws `SocketError(call:errno:)`. `EBADF` and `EFAULT` mean we passed a bad
/// descriptor or pointer: our bug, not the peer's, hence a precondition.
@inline(__always)
func syscall<T: FixedWidthInteger>(
    _ call: @autoclosure () -> String,
    _ body: () -> T
) throws(SocketError) -> IOResult<T> {
    while true {
        let result = body()
        if result >= 0 { return .processed(result) }
        let error = errno
        switch error {
        case EINTR:
            continue
        case EAGAIN, EWOULDBLOCK:
            return .wouldBlock
        case EBADF, EFAULT:
            preconditionFailure("\(call()) got errno \(error): a descriptor or buffer we own was invalid")
        default:
            throw SocketError(call: call(), errno: error)
        }
    }
}

/// Runs a system call that is not expected to block; `.wouldBlock` is reported as an error.
@inline(__always)
@discardableResult
func blockingSyscall<T: FixedWidthInteger>(
    _ call: @autoclosure () -> String,
    _ body: () -> T
) throws(SocketError) -> T {
    switch try syscall(call(), body) {
    case .processed(let value): return value
    case .wouldBlock: throw SocketError(call: call(), errno: EAGAIN)
    }
}
