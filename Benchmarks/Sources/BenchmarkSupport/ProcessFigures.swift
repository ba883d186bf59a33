import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Process-wide figures read from the kernel.
public enum ProcessFigures {
    /// CLOCK_MONOTONIC in nanoseconds: cheap (vDSO), comparable across threads.
    public static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// This process's resident set size in KiB (`VmRSS` in /proc/self/status). `trimmingHeap`
    /// first hands freed heap pages back (`malloc_trim`), so the figure counts live memory rather
    /// than what client threads' malloc arenas keep cached.
    public static func residentKiB(trimmingHeap: Bool = false) throws -> Int {
        // malloc.h is not in Glibc's module map; look the function up instead (RTLD_DEFAULT is 0).
        if trimmingHeap, let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") {
            typealias Trim = @convention(c) (Int) -> Int32
            _ = unsafeBitCast(symbol, to: Trim.self)(0)
        }
        // FileHandle reads to the end; /proc files report size 0.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/status") else {
            throw BenchError("cannot open /proc/self/status")
        }
        defer { try? handle.close() }
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let digits = line.dropFirst("VmRSS:".count).filter(\.isNumber)
            if let kib = Int(digits) { return kib }
        }
        throw BenchError("no VmRSS line in /proc/self/status")
    }

    /// Raises the soft open-file limit to the hard one; returns the limit now in force.
    @discardableResult
    public static func raiseFileLimit() throws -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { throw BenchError.system("getrlimit") }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max
            guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { throw BenchError.system("setrlimit") }
        }
        return Int(limit.rlim_cur)
    }

    /// The 1, 5 and 15 minute load averages (/proc/loadavg), or "unknown".
    public static func loadAverage() -> String {
        guard let handle = FileHandle(forReadingAtPath: "/proc/loadavg") else { return "unknown" }
        defer { try? handle.close() }
        let fields = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self).split(separator: " ")
        return fields.count >= 3 ? fields[0..<3].joined(separator: " ") : "unknown"
    }
}
