import Foundation

/// Figures from samples, and how the benchmarks print them.
public enum Statistics {
    /// The value at quantile `q` (0...1) of `sorted` values (nearest rank); 0 when empty.
    public static func quantile<T: BinaryInteger>(_ sorted: [T], _ q: Double) -> T {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((q * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count - 1, max(0, rank - 1))]
    }

    /// The median of `values` (the upper one of an even count).
    public static func median<T: Comparable>(_ values: [T]) -> T? {
        values.isEmpty ? nil : values.sorted()[values.count / 2]
    }

    /// `duration` in seconds.
    public static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// `duration` as `1.25 s`, `3.40 ms` or `12.0 µs`.
    public static func format(_ duration: Duration) -> String {
        let seconds = seconds(duration)
        if seconds >= 1 { return String(format: "%.2f s", seconds) }
        if seconds >= 0.001 { return String(format: "%.2f ms", seconds * 1e3) }
        return String(format: "%.1f µs", seconds * 1e6)
    }

    /// `nanoseconds` as milliseconds, `0.125 ms`.
    public static func milliseconds(_ nanoseconds: UInt64) -> String {
        String(format: "%.3f ms", Double(nanoseconds) / 1e6)
    }

    /// `count` per second over `duration`.
    public static func perSecond(_ count: Int, _ duration: Duration) -> Double {
        Double(count) / max(seconds(duration), 1e-9)
    }

    /// `kib` as mebibytes, `12.5 MiB`.
    public static func mebibytes(_ kib: Int) -> String {
        String(format: "%.1f MiB", Double(kib) / 1024)
    }
}
