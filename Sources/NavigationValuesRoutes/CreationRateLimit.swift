import Foundation
import HTTPCore
import NavigationValuesCrypto
import NavigationValuesSessions
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Rate limits what makes a session (`POST /v1/sessions`, `…/import`, `…/fork`, and a hand-off's
/// redeem, `POST /v1/handoffs/redeem`) per client
/// address, so that an anonymous client cannot fill
/// the server's memory and disk with sessions. A token bucket per address: `burst`
/// creations at once, refilled at `rate` per second; past it, 429 with `Retry-After`. Requests
/// with the admin token are exempt (bulk tools and benchmarks create with it).
///
/// The address is the socket's peer (`Request.remoteAddress`), never a header a client could
/// forge, unless the peer is a trusted proxy (``TrustedProxies``, `--trusted-proxies`), whose
/// `X-Forwarded-For` then names it: an IPv4 address, or the /64 prefix of an IPv6 one (a host
/// usually holds a whole /64).
/// The table of buckets is bounded (`maxClients`): full buckets, which say nothing, are dropped
/// first; past that an arbitrary entry makes room.
///
/// ```swift
/// router.add(middleware: CreationRateLimit(adminToken: token, rate: 20, burst: 200))
/// ```
public struct CreationRateLimit: Middleware {
    let adminToken: String
    private let buckets: TokenBuckets

    /// A limit of `burst` creations at once and `rate` per second after that, per client address,
    /// remembering at most `maxClients` addresses.
    public init(adminToken: String, rate: Double, burst: Int, maxClients: Int = 65_536) {
        self.adminToken = adminToken
        self.buckets = TokenBuckets(rate: rate, burst: burst, maxClients: maxClients)
    }

    /// The routes that make a session (creation, an import and a fork) or a token onto one (a
    /// hand-off's redeem, which answers a device token or a fork).
    static let creatingRoutes: Set<String> = [
        "/v1/sessions", "/v1/sessions/import", "/v1/sessions/fork", "/v1/handoffs/redeem",
    ]

    public func respond(to request: Request, next: Next) -> ResponseFuture {
        guard request.method == .post, Self.creatingRoutes.contains(request.route ?? ""), !isAdmin(request) else {
            return next(request)
        }
        let client = Self.clientKey(request.remoteAddress)
        if let wait = buckets.take(client, now: .now) {
            let seconds = max(1, Int(wait.seconds.rounded(.up)))
            return .ready(
                .failure(
                    APIError(
                        .tooManyRequests,
                        "this address creates sessions faster than the server allows (create-rate \(buckets.rate)/s, create-burst \(buckets.burst)); retry after \(seconds) s",
                        headers: ["Retry-After": String(seconds)], members: ["limit": .string("create-rate")])))
        }
        return next(request)
    }

    private func isAdmin(_ request: Request) -> Bool {
        guard let header = request.headers["authorization"] else { return false }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        return constantTimeEquals(HeaderValue.trimmed(parts[1]), adminToken)
    }

    /// The address a bucket belongs to: `127.0.0.1` for `127.0.0.1:52100`, the first 64 bits of an
    /// IPv6 address (an IPv4-mapped one counts as IPv4), `unknown` when there is none.
    static func clientKey(_ remoteAddress: String?) -> String {
        guard let address = remoteAddress, !address.isEmpty else { return "unknown" }
        let host = TrustedProxies.host(of: address)
        guard address.hasPrefix("[") else { return host }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard inet_pton(AF_INET6, host, &bytes) == 1 else { return host }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12..<16].map(String.init).joined(separator: ".")
        }
        return "v6:" + bytes[0..<8].map { String($0, radix: 16) }.joined(separator: ":")
    }
}

/// Token buckets by client, behind one lock (held only for a dictionary update).
final class TokenBuckets: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private struct Table {
        var buckets: [String: Bucket] = [:]
        var lastSweep: ContinuousClock.Instant?
    }

    let rate: Double
    let burst: Int
    let maxClients: Int
    private let table = Mutex(Table())

    init(rate: Double, burst: Int, maxClients: Int) {
        self.rate = max(rate, 0.001)
        self.burst = max(1, burst)
        self.maxClients = max(1, maxClients)
    }

    /// Addresses remembered now.
    var clientCount: Int { table.withLock { $0.buckets.count } }

    /// Takes one token for `client`: nil when it had one, else how long until it will.
    func take(_ client: String, now: ContinuousClock.Instant) -> Duration? {
        table.withLock { table in
            var bucket: Bucket
            if let existing = table.buckets[client] {
                bucket = existing
                bucket.tokens = min(Double(burst), bucket.tokens + (now - bucket.updated).seconds * rate)
            } else {
                makeRoom(in: &table, now: now)
                bucket = Bucket(tokens: Double(burst), updated: now)
            }
            bucket.updated = now
            guard bucket.tokens >= 1 else {
                table.buckets[client] = bucket
                return .seconds((1 - bucket.tokens) / rate)
            }
            bucket.tokens -= 1
            table.buckets[client] = bucket
            return nil
        }
    }

    /// Keeps the table under `maxClients`: drops buckets that have refilled (a client that comes
    /// back gets the same full bucket), at most once a second; then, if still full, any one.
    private func makeRoom(in table: inout Table, now: ContinuousClock.Instant) {
        guard table.buckets.count >= maxClients else { return }
        if table.lastSweep.map({ now - $0 >= .seconds(1) }) ?? true {
            table.lastSweep = now
            let full = Double(burst)
            table.buckets = table.buckets.filter { $0.value.tokens + (now - $0.value.updated).seconds * rate < full }
        }
        if table.buckets.count >= maxClients, let any = table.buckets.keys.first {
            table.buckets[any] = nil
        }
    }
}
