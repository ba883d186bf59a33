import Foundation
import HTTPCore

#if canImport(Glibc)
    import Glibc
#endif

/// The balancers whose `X-Forwarded-For` names the client (`--trusted-proxies`): address ranges
/// such as `10.0.0.0/8`, `172.16.0.0/12`, `::1` or `fd00::/8`. A request whose socket peer is in
/// one of them is taken to come from the address the header gives, for the creation limit
/// (``CreationRateLimit``) and the request log; from any other peer the header is ignored, since
/// any client could write it. With none (the default) the peer is always the client.
///
/// The header is read from the right, as each proxy appends the address it received from: the
/// client is the rightmost address outside the trusted ranges, so a client cannot pass for another
/// by sending a header of its own (a trusted proxy appends its peer after it). An entry that is not
/// an address ends the walk at the last address read.
///
/// ```swift
/// configuration.trustedProxies = try TrustedProxies(["10.0.0.0/8", "::1"])
/// ```
public struct TrustedProxies: Sendable, Equatable {
    /// One range: an address (4 bytes for IPv4, 16 for IPv6) and how many leading bits count.
    struct Range: Sendable, Equatable {
        var bytes: [UInt8]
        var prefixLength: Int

        func contains(_ address: [UInt8]) -> Bool {
            guard address.count == bytes.count else { return false }
            var bits = prefixLength
            for (mine, theirs) in zip(bytes, address) where bits > 0 {
                let mask: UInt8 = bits >= 8 ? 0xFF : ~(0xFF >> UInt8(bits))
                guard mine & mask == theirs & mask else { return false }
                bits -= 8
            }
            return true
        }
    }

    let ranges: [Range]

    /// No trusted proxy: the socket's peer is always the client.
    public init() { ranges = [] }

    /// The ranges in `list`: `ADDRESS/BITS` or a bare address (that address alone).
    /// - Throws: ``TrustedProxiesError`` naming the first entry that is not an address or a range.
    public init(_ list: [String]) throws(TrustedProxiesError) {
        var ranges: [Range] = []
        for entry in list {
            let text = HeaderValue.trimmed(entry)
            guard !text.isEmpty else { continue }
            let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let bytes = Self.address(String(parts[0])) else { throw TrustedProxiesError(entry: text) }
            var prefixLength = bytes.count * 8
            if parts.count == 2 {
                guard parts[1].allSatisfy(\.isASCIIDigit), let bits = Int(parts[1]), bits <= bytes.count * 8 else {
                    throw TrustedProxiesError(entry: text)
                }
                prefixLength = bits
            }
            ranges.append(Range(bytes: bytes, prefixLength: prefixLength))
        }
        self.ranges = ranges
    }

    /// Whether no proxy is trusted.
    public var isEmpty: Bool { ranges.isEmpty }

    /// Whether `address` (a textual IPv4 or IPv6 address) is in a trusted range.
    public func contains(_ address: String) -> Bool {
        Self.address(address).map(contains) ?? false
    }

    private func contains(_ bytes: [UInt8]) -> Bool {
        ranges.contains { $0.contains(bytes) }
    }

    /// The client's address for a request from `peer` (`Request.remoteAddress`, such as
    /// `10.0.0.2:41000` or `[::1]:41000`) carrying `forwardedFor` (the `X-Forwarded-For` values):
    /// the address the header names when the peer is trusted, else the peer's. IPv4 as
    /// `203.0.113.7`, IPv6 in brackets, `[2001:db8::1]`, without a port.
    public func client(peer: String?, forwardedFor: [String]) -> String? {
        guard !ranges.isEmpty, !forwardedFor.isEmpty, let peer, let peerBytes = Self.address(Self.host(of: peer)),
            contains(peerBytes)
        else { return peer }
        var client = peerBytes
        let entries = forwardedFor.flatMap { $0.split(separator: ",") }
        for entry in entries.reversed() {
            var text = HeaderValue.trimmed(entry)
            if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
            guard let bytes = Self.address(text) else { break }
            client = bytes
            if !contains(bytes) { break }
        }
        return Self.text(client) ?? peer
    }

    /// The host of a socket address as `Request.remoteAddress` gives it: `127.0.0.1` for
    /// `127.0.0.1:52100`, `::1` for `[::1]:52100`; the text itself when it has no port.
    public static func host(of remoteAddress: String) -> String {
        // The usual address, all ASCII: its first `:` byte is its first `:` character, found
        // without breaking the text into characters (each request's log line asks).
        let utf8 = remoteAddress.utf8
        if utf8.first != UInt8(ascii: "["), utf8.allSatisfy({ $0 < 0x80 }) {
            guard let colon = utf8.firstIndex(of: UInt8(ascii: ":")) else { return remoteAddress }
            return String(remoteAddress[..<colon])
        }
        if remoteAddress.hasPrefix("[") {
            guard let close = remoteAddress.firstIndex(of: "]") else { return remoteAddress }
            return String(remoteAddress[remoteAddress.index(after: remoteAddress.startIndex)..<close])
        }
        return String(remoteAddress.prefix { $0 != ":" })
    }

    /// The bytes of a textual address: 4 for IPv4 (an IPv4-mapped IPv6 address included), 16 for
    /// IPv6; nil for anything else.
    static func address(_ text: String) -> [UInt8]? {
        var v4 = [UInt8](repeating: 0, count: 4)
        if inet_pton(AF_INET, text, &v4) == 1 { return v4 }
        var v6 = [UInt8](repeating: 0, count: 16)
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        if v6[0..<10].allSatisfy({ $0 == 0 }), v6[10] == 0xFF, v6[11] == 0xFF { return Array(v6[12..<16]) }
        return v6
    }

    /// The text of an address's bytes: `203.0.113.7`, or `[2001:db8::1]`.
    static func text(_ bytes: [UInt8]) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        guard inet_ntop(family, bytes, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return bytes.count == 4 ? text : "[\(text)]"
    }
}

/// An entry of `--trusted-proxies` that is neither an address nor a range.
public struct TrustedProxiesError: Error, Equatable, CustomStringConvertible {
    public var entry: String
    public init(entry: String) { self.entry = entry }
    public var description: String {
        "'\(entry)' is not an IP address or a range such as 10.0.0.0/8 or fd00::/8"
    }
}

/// Puts the client that a trusted proxy names (``TrustedProxies``) in `Request.remoteAddress`,
/// before the log and the creation limit read it. First in the chain.
struct ForwardedClient: Middleware {
    let trusted: TrustedProxies

    func respond(to request: Request, next: Next) -> ResponseFuture {
        guard !trusted.isEmpty, request.headers.contains("x-forwarded-for") else { return next(request) }
        var request = request
        request.remoteAddress = trusted.client(
            peer: request.remoteAddress, forwardedFor: request.headers.values(for: "x-forwarded-for"))
        return next(request)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
