import Testing

@testable import HTTPServer

/// Mutated requests, fed in random pieces: the parser returns or throws `HTTPRequestError`,
/// never traps, and never holds more than its limits allow.
@Suite struct ParserFuzzTests {
    /// xorshift64*: a fixed seed makes every run the same.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            return state &* 2_685_821_657_736_338_717
        }
    }

    static let seeds: [[UInt8]] = [
        "GET /a%20b?x=1&y=%2F HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\n\r\n",
        "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\nhello",
        "POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;e=1\r\nhello\r\n0\r\nT: 1\r\n\r\n",
    ].map { Array($0.utf8) }

    @Test func mutatedInputNeverTraps() {
        var random = Generator(state: 0x9E37_79B9_7F4A_7C15)
        let limits = HTTPLimits(maxHeadBytes: 512, maxRequestLineBytes: 256, maxBodyBytes: 1024, maxHeaderCount: 20)
        var outcomes = (requests: 0, errors: 0)
        for _ in 0..<20_000 {
            var bytes = Self.seeds.randomElement(using: &random) ?? []
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let position = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[position] = UInt8.random(in: 0...255, using: &random)
                case 1:
                    bytes.insert(
                        contentsOf: [0x0D, 0x0A, 0x3A, 0x20, 0x25, 0x30].shuffled(using: &random).prefix(2),
                        at: position)
                case 2: bytes.remove(at: position)
                default: bytes.insert(contentsOf: bytes[position...].prefix(40), at: position)
                }
                if bytes.isEmpty { bytes = [0x0A] }
            }
            let parser = RequestParser(limits: limits)
            var offset = 0
            feeding: while offset < bytes.count {
                let length = Int.random(in: 1...max(1, bytes.count - offset), using: &random)
                parser.append(Array(bytes[offset..<offset + length]))
                offset += length
                do {
                    while let event = try parser.next() {
                        if case .request(let request, _) = event {
                            #expect(request.body.count <= limits.maxBodyBytes)
                            outcomes.requests += 1
                        }
                    }
                } catch {
                    outcomes.errors += 1
                    break feeding
                }
            }
        }
        // Both outcomes occur, so the mutations exercise the parser rather than bounce off it.
        #expect(outcomes.requests > 100)
        #expect(outcomes.errors > 100)
    }
}
