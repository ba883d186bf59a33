import Synchronization

/// Limits on what a client may send, enforced while parsing (docs/API.md "Limits").
public struct HTTPLimits: Sendable, Equatable {
    /// A route allowed a larger body than `maxBodyBytes`, such as an upload. Such a body must say its
    /// length (`Content-Length`; a chunked one keeps `maxBodyBytes`), and is received only while
    /// `maxLargeBodyBytesInFlight` has room for it.
    public struct LargeBody: Sendable, Equatable {
        /// The method of the requests allowed more.
        public var method: HTTPMethod
        /// The exact, percent-decoded path (no pattern), such as `/v1/sessions/import`.
        public var path: String
        /// The body, in bytes; more is 413.
        public var maxBodyBytes: Int

        public init(method: HTTPMethod, path: String, maxBodyBytes: Int) {
            self.method = method
            self.path = path
            self.maxBodyBytes = maxBodyBytes
        }
    }

    /// Request line plus header fields, in bytes; more is 431.
    public var maxHeadBytes: Int
    /// The request line, in bytes; more is 414, even when the head is also too large.
    public var maxRequestLineBytes: Int
    /// The body, in bytes, after de-chunking; more is 413.
    public var maxBodyBytes: Int
    /// The number of header fields; more is 431.
    public var maxHeaderCount: Int
    /// Routes allowed bodies over `maxBodyBytes`.
    public var largeBodies: [LargeBody]
    /// Bytes of bodies over `maxBodyBytes` the whole server holds at once, from the head's arrival
    /// until the request is answered; a large body that does not fit is 503 with `Retry-After`.
    public var maxLargeBodyBytesInFlight: Int

    /// The defaults of docs/API.md: 16 KiB head, 8 KiB request line, 1 MiB body, 100 fields; no route
    /// allowed more, 256 MiB for those that are.
    public init(
        maxHeadBytes: Int = 16 * 1024,
        maxRequestLineBytes: Int = 8 * 1024,
        maxBodyBytes: Int = 1024 * 1024,
        maxHeaderCount: Int = 100,
        largeBodies: [LargeBody] = [],
        maxLargeBodyBytesInFlight: Int = 256 * 1024 * 1024
    ) {
        self.maxHeadBytes = maxHeadBytes
        self.maxRequestLineBytes = maxRequestLineBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderCount = maxHeaderCount
        self.largeBodies = largeBodies
        self.maxLargeBodyBytesInFlight = maxLargeBodyBytesInFlight
    }

    /// The body limit of a request, given its head.
    func maxBodyBytes(for request: Request) -> Int {
        for large in largeBodies where large.method == request.method && large.path == request.path {
            return max(maxBodyBytes, large.maxBodyBytes)
        }
        return maxBodyBytes
    }
}

/// The memory a server sets aside for bodies over the usual limit, shared by every connection.
package final class BodyBudget: Sendable {
    private let available: Atomic<Int>

    package init(bytes: Int) {
        available = Atomic(max(0, bytes))
    }

    /// Bytes not reserved now.
    package var availableBytes: Int { available.load(ordering: .relaxed) }

    /// Sets `bytes` aside, or answers nil when they do not fit; they return when the reservation
    /// is released (the last copy of the request holding it is gone).
    package func reserve(_ bytes: Int) -> BodyReservation? {
        var current = available.load(ordering: .relaxed)
        while current >= bytes {
            let (exchanged, original) = available.compareExchange(
                expected: current, desired: current - bytes, ordering: .acquiringAndReleasing)
            if exchanged { return BodyReservation(budget: self, bytes: bytes) }
            current = original
        }
        return nil
    }

    fileprivate func give(_ bytes: Int) {
        available.add(bytes, ordering: .acquiringAndReleasing)
    }
}

/// Bytes of a `BodyBudget` held by one request; given back when the last reference goes.
package final class BodyReservation: Sendable {
    private let budget: BodyBudget
    package let bytes: Int

    fileprivate init(budget: BodyBudget, bytes: Int) {
        self.budget = budget
        self.bytes = bytes
    }

    deinit { budget.give(bytes) }
}

/// An incremental HTTP/1.1 request parser (RFC 9112). Feed it bytes with `append`, then call
/// `next()` until it returns nil. It keeps at most one request's head and body plus one read's
/// worth of extra bytes, and throws `HTTPRequestError` on anything malformed or over a limit.
/// Pure: no I/O, no clock.
///
/// A class, so that a connection holds it in one place: as a struct stored in the connection,
/// each call of a getter such as `hasBufferedBytes` from another module copied the whole parser
/// (its buffer, limits and the request being received), retaining every field.
package final class RequestParser {
    package enum Event: Equatable {
        /// The head (given without its body) asked for `Expect: 100-continue` and the body has not
        /// arrived: send `100 Continue`, or refuse the request before the client sends the body.
        case sendContinue(Request)
        /// A complete request, and whether the connection may be kept open after it.
        case request(Request, keepAlive: Bool)

        package static func == (lhs: Event, rhs: Event) -> Bool {
            switch (lhs, rhs) {
            case (.sendContinue(let a), .sendContinue(let b)): a.method == b.method && a.target == b.target
            case (.request(let a, let x), .request(let b, let y)):
                a.method == b.method && a.target == b.target && a.headers == b.headers && a.body == b.body && x == y
            default: false
            }
        }
    }

    enum Framing: Equatable {
        case none
        case length(Int)
        case chunked
    }

    private enum State {
        /// Looking for the end of the head; offsets are relative to `readIndex`.
        case head(scanned: Int, lineStart: Int, requestLineEnd: Int?)
        case lengthBody(Request, keepAlive: Bool, length: Int)
        case chunkedBody(Request, keepAlive: Bool, decoder: ChunkedBodyDecoder)
    }

    let limits: HTTPLimits
    /// Where bodies over `limits.maxBodyBytes` are reserved; without one, no route gets more.
    let budget: BodyBudget?
    // Not checked for exclusivity at run time (a check per access, on every request): they are
    // private, and the parser is used from one thread, by its own methods, none of which calls another
    // while it holds one of them.
    @exclusivity(unchecked) private var buffer: [UInt8] = []
    @exclusivity(unchecked) private var readIndex = 0
    @exclusivity(unchecked) private var state = State.head(scanned: 0, lineStart: 0, requestLineEnd: nil)
    /// An answered request of this connection, emptied, whose storage the next head fills in.
    @exclusivity(unchecked) private var spare: Request?
    /// Whether a head was parsed since the last `releaseIdleSpare()`.
    @exclusivity(unchecked) private var parsedSinceRelease = false

    package init(limits: HTTPLimits = HTTPLimits(), budget: BodyBudget? = nil) {
        self.limits = limits
        self.budget = budget
    }

    /// Whether bytes of a request have been received and not yet returned as a request.
    package var hasPartialRequest: Bool {
        if case .head = state { return readIndex < buffer.count }
        return true
    }

    /// Whether the head of the current request is complete and its body is being received.
    package var isReceivingBody: Bool {
        if case .head = state { return false }
        return true
    }

    /// Bytes the buffer has room for (what it costs the connection, held or not).
    package var bufferCapacity: Int { buffer.capacity }

    /// Whether unparsed bytes are waiting in the buffer.
    package var hasBufferedBytes: Bool { readIndex < buffer.count }

    /// Frees a buffer larger than `capacity` bytes once everything in it is parsed: an idle
    /// connection then holds at most a few KiB whatever its last request was, and one that
    /// streams a response for a long time (`capacity` 0) holds none.
    package func releaseIdleBuffer(keepingUpTo capacity: Int = 4096) {
        if capacity == 0 { spare = nil }
        guard readIndex == buffer.count, buffer.capacity > capacity else { return }
        buffer = []
        readIndex = 0
    }

    /// Takes back an answered request, whose storage the next request parsed here then reuses
    /// (emptied first) instead of allocating its own; dropped when a handler or stream still
    /// holds a copy of it.
    package func recycle(_ request: consuming Request) {
        guard request.resetForReuse() else { return }
        spare = consume request
    }

    /// Whether a recycled request waits to be reused.
    var hasSpareRequest: Bool { spare != nil }

    /// Drops the recycled request when no head was parsed since the last call, so that a
    /// connection that has gone quiet holds none (as its write buffer: called by the loop's
    /// periodic sweep).
    package func releaseIdleSpare() {
        defer { parsedSinceRelease = false }
        if !parsedSinceRelease { spare = nil }
    }

    /// Appends received bytes.
    package func append(_ bytes: UnsafeRawBufferPointer) {
        if readIndex == buffer.count {
            if buffer.capacity > 64 * 1024 {
                buffer = []  // do not keep a large body's capacity on an idle connection
            } else {
                buffer.removeAll(keepingCapacity: true)
            }
            readIndex = 0
        } else if readIndex > 4096 && readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    package func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next event the buffered bytes allow, or nil when more bytes are needed.
    /// - Throws: `HTTPRequestError` (400, 413, 414, 431, 501, 505); the connection must then close.
    package func next() throws(HTTPRequestError) -> Event? {
        switch state {
        case .head(let scanned, let lineStart, let requestLineEnd):
            return try nextHead(scanned: scanned, lineStart: lineStart, requestLineEnd: requestLineEnd)
        case .lengthBody(var request, let keepAlive, let length):
            guard buffer.count - readIndex >= length else { return nil }
            // The state lets go of the request first, so that it is changed in place, not copied.
            state = .head(scanned: 0, lineStart: 0, requestLineEnd: nil)
            request.body = Array(buffer[readIndex..<readIndex + length])
            readIndex += length
            return .request(request, keepAlive: keepAlive)
        case .chunkedBody(var request, let keepAlive, var decoder):
            let (consumed, isDone) = try buffer.withUnsafeBufferPointer { pointer throws(HTTPRequestError) in
                try decoder.decode(UnsafeBufferPointer(rebasing: pointer[readIndex...]), limits: limits)
            }
            readIndex += consumed
            guard isDone else {
                state = .chunkedBody(request, keepAlive: keepAlive, decoder: decoder)
                return nil
            }
            state = .head(scanned: 0, lineStart: 0, requestLineEnd: nil)
            request.body = decoder.body
            return .request(request, keepAlive: keepAlive)
        }
    }

    // MARK: - Head

    private func nextHead(scanned: Int, lineStart: Int, requestLineEnd: Int?) throws(HTTPRequestError)
        -> Event?
    {
        // RFC 9112 §2.2: ignore empty lines received before the request line.
        if scanned == 0 {
            while readIndex < buffer.count, buffer[readIndex] == 0x0D || buffer[readIndex] == 0x0A {
                readIndex += 1
            }
        }
        let scan = buffer.withUnsafeBufferPointer { pointer in
            HeadScanner.scan(
                UnsafeBufferPointer(rebasing: pointer[readIndex...]),
                from: scanned,
                lineStart: lineStart,
                requestLineEnd: requestLineEnd
            )
        }
        let available = buffer.count - readIndex
        switch scan {
        case .invalidMethod:
            throw HTTPRequestError(.badRequest, detail: "The request line does not start with a method.")
        case .incomplete(let lineStart, let requestLineEnd):
            if (requestLineEnd ?? available) > limits.maxRequestLineBytes {
                throw HTTPRequestError(
                    .uriTooLong, detail: "The request line is over \(limits.maxRequestLineBytes) bytes.")
            }
            if available > limits.maxHeadBytes {
                throw HTTPRequestError(
                    .headerFieldsTooLarge, detail: "The header block is over \(limits.maxHeadBytes) bytes.")
            }
            state = .head(scanned: available, lineStart: lineStart, requestLineEnd: requestLineEnd)
            return nil
        case .complete(let headEnd, let requestLineEnd):
            if requestLineEnd > limits.maxRequestLineBytes {
                throw HTTPRequestError(
                    .uriTooLong, detail: "The request line is over \(limits.maxRequestLineBytes) bytes.")
            }
            if headEnd > limits.maxHeadBytes {
                throw HTTPRequestError(
                    .headerFieldsTooLarge, detail: "The header block is over \(limits.maxHeadBytes) bytes.")
            }
            parsedSinceRelease = true
            let head = try buffer.withUnsafeBufferPointer { pointer throws(HTTPRequestError) in
                try HeadParser.parse(
                    UnsafeBufferPointer(rebasing: pointer[readIndex..<readIndex + headEnd]), limits: limits,
                    reusing: &spare)
            }
            readIndex += headEnd
            return try startBody(head)
        }
    }

    private func startBody(_ head: consuming HeadParser.Head) throws(HTTPRequestError) -> Event? {
        state = .head(scanned: 0, lineStart: 0, requestLineEnd: nil)
        switch head.framing {
        case .none:
            return .request(head.request, keepAlive: head.keepAlive)
        case .length(let length):
            let allowed = budget == nil ? limits.maxBodyBytes : limits.maxBodyBytes(for: head.request)
            guard length <= allowed else {
                throw HTTPRequestError(.contentTooLarge, detail: "The body is over \(allowed) bytes.")
            }
            if length == 0 { return .request(head.request, keepAlive: head.keepAlive) }
            let keepAlive = head.keepAlive
            // The head lets go of its request here, so that the state holds it alone and `next()`
            // sets its body in place rather than copying it (a request shares its storage).
            let continued = head.expectsContinue && buffer.count - readIndex < length ? head.request : nil
            var request = (consume head).request
            if length > limits.maxBodyBytes {
                guard let reservation = budget?.reserve(length) else {
                    throw HTTPRequestError(
                        .serviceUnavailable,
                        detail: "The server is receiving as many large bodies as it takes at once; retry later.",
                        headers: ["Retry-After": "1"])
                }
                request.bodyReservation = reservation
            }
            state = .lengthBody(consume request, keepAlive: keepAlive, length: length)
            if let continued { return .sendContinue(continued) }
            return try next()
        case .chunked:
            let keepAlive = head.keepAlive
            let continued = head.expectsContinue && buffer.count == readIndex ? head.request : nil
            state = .chunkedBody((consume head).request, keepAlive: keepAlive, decoder: ChunkedBodyDecoder())
            if let continued { return .sendContinue(continued) }
            return try next()
        }
    }
}

/// Finds the end of a request head incrementally, so a head that arrives a byte at a time
/// is still scanned once (no quadratic rescans).
enum HeadScanner {
    enum Result: Equatable {
        case incomplete(lineStart: Int, requestLineEnd: Int?)
        /// `headEnd` is the offset just past the empty line; `requestLineEnd` the request line's length.
        case complete(headEnd: Int, requestLineEnd: Int)
        case invalidMethod
    }

    static func scan(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, lineStart: Int, requestLineEnd: Int?)
        -> Result
    {
        var lineStart = lineStart
        var requestLineEnd = requestLineEnd
        var index = start
        if requestLineEnd == nil {
            // Until the first space, every byte must be a token character (the method), so that
            // garbage is refused at once rather than after the header timeout. Only the first
            // 64 bytes are checked, so a head fed a byte at a time costs no quadratic rescans.
            for position in 0..<min(bytes.count, 64) {
                let byte = bytes[position]
                if byte == 0x20 { break }
                if !HeadParser.isTokenCharacter(byte) { return .invalidMethod }
            }
        }
        while index < bytes.count {
            if bytes[index] == 0x0A {
                let length = index - lineStart
                if requestLineEnd == nil {
                    requestLineEnd = index
                } else if length == 0 || (length == 1 && bytes[lineStart] == 0x0D) {
                    return .complete(headEnd: index + 1, requestLineEnd: requestLineEnd ?? index)
                }
                lineStart = index + 1
            }
            index += 1
        }
        return .incomplete(lineStart: lineStart, requestLineEnd: requestLineEnd)
    }
}
