/// When and how often a request is sent again: after a lost or refused connection, and after a
/// status that says "try again" (503, 429, 502, 504), waiting what `Retry-After` asks or an
/// exponential backoff with jitter.
///
/// Retrying a mutation is safe because every mutation carries one `Idempotency-Key`, the same on
/// every attempt: the server applies it once and answers a retry with the first answer.
///
/// ```swift
/// var policy = RetryPolicy()
/// policy.maxAttempts = 3            // the first send and two retries
/// let client = NavigationValuesClient(baseURL: url, configuration: .init(retry: policy))
/// ```
public struct RetryPolicy: Sendable, Equatable {
    /// Sends in all, the first included; 1 never retries.
    public var maxAttempts: Int
    /// The backoff before the first retry; it doubles after each, up to `maxDelay`.
    public var initialDelay: Duration
    /// The longest backoff between two attempts.
    public var maxDelay: Duration
    /// The longest `Retry-After` honoured; a server asking for more fails the call at once, with
    /// the server's answer, rather than holding it for minutes.
    public var maxRetryAfter: Duration
    /// The statuses that are retried.
    public var retriedStatuses: Set<Int>

    /// Six attempts, 100 ms doubling to 5 s, `Retry-After` up to 30 s, on 429, 502, 503 and 504.
    public init(
        maxAttempts: Int = 6, initialDelay: Duration = .milliseconds(100), maxDelay: Duration = .seconds(5),
        maxRetryAfter: Duration = .seconds(30), retriedStatuses: Set<Int> = [429, 502, 503, 504]
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
        self.retriedStatuses = retriedStatuses
    }

    /// Never retries.
    public static let never = RetryPolicy(maxAttempts: 1)

    /// The backoff before attempt `attempt + 1` (attempt counts from 1): half of the exponential
    /// delay plus `jitter` (0...1, random unless given) of the other half ("equal jitter"), so
    /// clients that failed together spread out.
    func backoff(after attempt: Int, jitter: Double = .random(in: 0...1)) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        let ceiling = min(initialDelay * (1 << exponent), maxDelay)
        let half = ceiling / 2
        return half + half * min(max(jitter, 0), 1)
    }

    /// The wait before retrying a status that `retriedStatuses` holds: what `Retry-After` asks
    /// (delay-seconds, RFC 9110 §10.2.3), or the backoff. Nil when the server asks for longer than
    /// `maxRetryAfter`.
    func delay(after attempt: Int, retryAfter: String?, jitter: Double = .random(in: 0...1)) -> Duration? {
        guard let retryAfter else { return backoff(after: attempt, jitter: jitter) }
        let trimmed = retryAfter.trimmingSpaces
        guard let seconds = Int64(trimmed), seconds >= 0 else {
            // An HTTP-date (or junk): fall back to the backoff rather than parse a clock we cannot trust.
            return backoff(after: attempt, jitter: jitter)
        }
        let asked = Duration.seconds(seconds)
        return asked <= maxRetryAfter ? asked : nil
    }
}

extension String {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        guard let first = firstIndex(where: { $0 != " " && $0 != "\t" }),
            let last = lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return "" }
        return String(self[first...last])
    }
}
