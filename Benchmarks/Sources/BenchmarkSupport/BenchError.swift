import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Why a benchmark stopped: what it was doing and what went wrong.
public struct BenchError: Error, CustomStringConvertible {
    /// What went wrong.
    public var description: String

    /// An error that says what went wrong.
    public init(_ description: String) {
        self.description = description
    }

    /// A failed system call, with its `errno` spelled out.
    public static func system(_ call: String, errno code: Int32 = errno) -> BenchError {
        BenchError("\(call) failed: \(String(cString: strerror(code))) (errno \(code))")
    }
}
