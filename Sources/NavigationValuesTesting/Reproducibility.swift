import Foundation
import NavigationValuesSessions
import Synchronization

/// A clock that moves only when told, for tests of what depends on time (idempotency keys kept
/// 24 h, observer tokens and stream tickets that expire, retention).
///
/// ```swift
/// let clock = ManualClock()
/// var configuration = InMemoryServer.Configuration()
/// configuration.now = { clock.now }
/// let server = try await InMemoryServer(configuration: configuration)
/// clock.advance(by: .seconds(3_600))
/// ```
public final class ManualClock: Sendable {
    private let current: Mutex<Date>

    /// A clock at `start` (by default 2026-01-01T00:00:00Z).
    public init(_ start: Date = Date(timeIntervalSince1970: 1_767_225_600)) {
        current = Mutex(start)
    }

    /// The time it shows.
    public var now: Date { current.withLock { $0 } }

    /// Moves it on by `duration`.
    public func advance(by duration: Duration) {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        current.withLock { $0 += seconds }
    }
}

extension IdentifierGenerator {
    /// Ids and tokens drawn from a generator seeded with `seed` (SplitMix64): the same sequence
    /// on every run and every platform, so a test may name the ids it will meet. Predictable, so
    /// never for a server others can reach.
    public static func seeded(_ seed: UInt64) -> IdentifierGenerator {
        let state = Mutex(seed)
        return IdentifierGenerator { count in
            state.withLock { state in
                var bytes: [UInt8] = []
                bytes.reserveCapacity(count + 7)
                while bytes.count < count {
                    // SplitMix64 (Steele, Lea and Flood, 2014).
                    state &+= 0x9E37_79B9_7F4A_7C15
                    var value = state
                    value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
                    value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
                    value ^= value >> 31
                    withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
                }
                return Array(bytes.prefix(count))
            }
        }
    }
}
