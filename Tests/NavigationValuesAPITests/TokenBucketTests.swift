import Foundation
import Testing

@testable import NavigationValuesRoutes

/// The creation quota's buckets, by instants passed in: refill, the client key, a bounded table.
@Suite struct TokenBucketTests {
    @Test func aBucketSpendsItsBurstThenRefillsAtItsRate() {
        let buckets = TokenBuckets(rate: 2, burst: 3, maxClients: 10)
        let start = ContinuousClock.now
        for _ in 0..<3 { #expect(buckets.take("a", now: start) == nil) }
        let wait = buckets.take("a", now: start)
        #expect(wait == .milliseconds(500))
        #expect(buckets.take("a", now: start + .milliseconds(400)) != nil)
        #expect(buckets.take("a", now: start + .milliseconds(1_000)) == nil)
        // Another client has its own bucket.
        #expect(buckets.take("b", now: start) == nil)
    }

    @Test func theTableOfClientsStaysBounded() {
        let buckets = TokenBuckets(rate: 1, burst: 2, maxClients: 8)
        let start = ContinuousClock.now
        for index in 0..<1_000 {
            _ = buckets.take("client-\(index)", now: start + .milliseconds(index))
            #expect(buckets.clientCount <= 8)
        }
    }

    @Test(arguments: [
        ("127.0.0.1:52100", "127.0.0.1"), ("[::1]:8080", "v6:0:0:0:0:0:0:0:0"),
        ("[2001:db8:1:2:aaaa:bbbb:cccc:dddd]:1", "v6:20:1:d:b8:0:1:0:2"), ("[::ffff:10.0.0.7]:9", "10.0.0.7"),
    ])
    func clientsAreKeyedByAddressAndIPv6ByItsSlash64(address: String, key: String) {
        #expect(CreationRateLimit.clientKey(address) == key)
    }

    @Test func twoHostsOfOneIPv6Slash64ShareABucket() {
        #expect(
            CreationRateLimit.clientKey("[2001:db8::1]:1") == CreationRateLimit.clientKey("[2001:db8::ffff:1]:2"))
        #expect(CreationRateLimit.clientKey(nil) == "unknown")
    }
}
