#if canImport(Glibc)
    import Glibc
#endif

/// A point in time for the event loops' own bookkeeping (timeouts, sweeps, the connection's
/// state machine): `ContinuousClock`'s clock (`CLOCK_BOOTTIME`), kept as whole nanoseconds.
///
/// `ContinuousClock.Instant` is a resilient type of the standard library, so its size is known
/// only at run time: every struct and enum holding one was copied, compared and switched on
/// through the runtime's value witnesses, several times per request. This one is a plain integer.
struct LoopInstant: Comparable, Hashable, Sendable {
    let nanoseconds: Int64

    init(nanoseconds: Int64) {
        self.nanoseconds = nanoseconds
    }

    static var now: LoopInstant {
        var spec = timespec()
        clock_gettime(CLOCK_BOOTTIME, &spec)
        return LoopInstant(nanoseconds: Int64(spec.tv_sec) &* 1_000_000_000 &+ Int64(spec.tv_nsec))
    }

    static func < (lhs: LoopInstant, rhs: LoopInstant) -> Bool { lhs.nanoseconds < rhs.nanoseconds }

    /// Saturates rather than traps: a configured timeout may be far longer than any uptime.
    static func + (lhs: LoopInstant, rhs: Duration) -> LoopInstant {
        let (sum, overflow) = lhs.nanoseconds.addingReportingOverflow(rhs.wholeNanoseconds)
        return LoopInstant(nanoseconds: overflow ? (rhs < .zero ? .min : .max) : sum)
    }

    static func - (lhs: LoopInstant, rhs: LoopInstant) -> Duration {
        let (difference, overflow) = lhs.nanoseconds.subtractingReportingOverflow(rhs.nanoseconds)
        if overflow { return lhs < rhs ? .nanoseconds(Int64.min) : .nanoseconds(Int64.max) }
        return .nanoseconds(difference)
    }
}

extension Duration {
    /// The duration in nanoseconds, saturated to `Int64`'s range.
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        let (sum, overflowSum) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000)
        if overflowSum { return seconds < 0 ? .min : .max }
        return sum
    }
}
