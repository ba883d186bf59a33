import NavigationValuesRoutes
import Testing

/// The ranges of `--trusted-proxies` and how a client is read from `X-Forwarded-For`.
@Suite struct TrustedProxiesTests {
    @Test func rangesHoldTheirAddressesOnly() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "192.168.1.7", "fd00::/8", " 172.16.0.0/12 "])
        #expect(proxies.contains("10.255.0.1"))
        #expect(!proxies.contains("11.0.0.1"))
        #expect(proxies.contains("192.168.1.7"))
        #expect(!proxies.contains("192.168.1.8"))
        #expect(proxies.contains("172.31.255.255"))
        #expect(!proxies.contains("172.32.0.0"))
        #expect(proxies.contains("fd12:3456::1"))
        #expect(!proxies.contains("fe80::1"))
        #expect(proxies.contains("::ffff:10.0.0.1"))  // IPv4-mapped counts as IPv4
        #expect(!proxies.contains("not an address"))
        #expect(try TrustedProxies(["0.0.0.0/0"]).contains("203.0.113.1"))
        #expect(try !TrustedProxies(["0.0.0.0/0"]).contains("2001:db8::1"))
        #expect(TrustedProxies().isEmpty)
    }

    @Test(arguments: ["10.0.0.0/33", "abc", "10.0.0.0/", "/8", "::1/129", "10.0.0.0/+8", "10.0.0"])
    func aWrongEntryIsRefusedByName(entry: String) {
        #expect(throws: TrustedProxiesError(entry: entry)) { try TrustedProxies(["127.0.0.1", entry]) }
    }

    @Test func theClientIsTheRightmostUntrustedAddressFromATrustedPeerOnly() throws {
        let proxies = try TrustedProxies(["10.0.0.0/8", "::1"])
        #expect(proxies.client(peer: "10.0.0.2:4000", forwardedFor: ["203.0.113.5"]) == "203.0.113.5")
        #expect(proxies.client(peer: "[::1]:4000", forwardedFor: ["1.2.3.4, 203.0.113.5, 10.9.9.9"]) == "203.0.113.5")
        #expect(proxies.client(peer: "10.0.0.2:4000", forwardedFor: ["1.2.3.4", "10.0.0.3"]) == "1.2.3.4")
        #expect(proxies.client(peer: "10.0.0.2:4000", forwardedFor: ["2001:db8::7"]) == "[2001:db8::7]")
        #expect(proxies.client(peer: "10.0.0.2:4000", forwardedFor: ["[2001:db8::7]"]) == "[2001:db8::7]")
        // Every hop trusted: the leftmost; an entry that is no address ends the walk.
        #expect(proxies.client(peer: "10.0.0.2:4000", forwardedFor: ["10.0.0.9, 10.0.0.8"]) == "10.0.0.9")
        #expect(proxies.client(peer: "10.0.0.2:4000", forwardedFor: ["1.2.3.4, unknown, 10.0.0.8"]) == "10.0.0.8")
        // From an untrusted peer, or with no header, the peer.
        #expect(proxies.client(peer: "198.51.100.1:4000", forwardedFor: ["203.0.113.5"]) == "198.51.100.1:4000")
        #expect(proxies.client(peer: "10.0.0.2:4000", forwardedFor: []) == "10.0.0.2:4000")
        #expect(TrustedProxies().client(peer: "10.0.0.2:4000", forwardedFor: ["203.0.113.5"]) == "10.0.0.2:4000")
    }
}
