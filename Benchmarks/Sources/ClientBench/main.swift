// client-bench [--mutations N] [--events N] [--rounds R]
//
//     swift run --package-path Benchmarks -c release client-bench
//
// What the Swift client costs on the client's side, beside bare HTTP from the
// same run. The server runs in a child process (this executable, `client-bench serve`, on
// `:memory:`), so every figure of this process is the client's own:
//   1. per mutation (`PATCH …/screens/root/values` of a typed key, sequential on one connection):
//      the client library against a raw keep-alive socket sending the same request with its
//      `Idempotency-Key`: wall µs, CPU µs of this process, and heap allocations (every thread's,
//      counted by a malloc hook, `MallocCounter`);
//   2. events the mirror (`RemoteStack`) applies per second: from memory (a snapshot, then N
//      recorded events of a 10-screen session: values on the root that reach every screen, values
//      on the top, publishes walking back, pushes and pops), and end to end from the event stream
//      (`session.events(after:)` into the mirror) against a raw socket reading the same stream;
//   3. the same for the whole-tree mirror (`RemoteTree`) on a session with tabs, a sheet and a cover
//      over it: values reaching into presentations, publishes walking out of them, selections,
//      tab pushes and pops, the cover dismissed and presented again, batches.
// R rounds, alternating client and anchor; medians. Each figure is compared with
// Benchmarks/Thresholds/client.json (exit 1 when one is not met).
import BenchmarkSupport
import Foundation
import MallocCounter
import NavigationValues
import NavigationValuesAPI
import NavigationValuesClient
import NavigationValuesWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#endif

struct Title: ValueKey { static let defaultValue = "" }

// MARK: - The child: the server

if CommandLine.arguments.dropFirst().first == "serve" {
    var configuration = NavigationValuesServer.Configuration()
    configuration.port = 0
    configuration.databasePath = ":memory:"
    configuration.adminToken = "bench-admin"
    configuration.eventLoopCount = 1
    // No retention pass while the benchmark runs: a round writes 20,000 events to one session and
    // replays them from the start, and a pass (every 60 s by default) compacts the session down to
    // its last 10,000, after which the replay is a 410 (seen once in a run of this benchmark).
    configuration.retentionInterval = nil
    let server = try await NavigationValuesServer.start(configuration)
    FileHandle.standardOutput.write(Data("listening on http://127.0.0.1:\(server.port)\n".utf8))
    // Until the parent closes our stdin (it exits, or is killed).
    _ = FileHandle.standardInput.readDataToEndOfFile()
    exit(0)
}

// MARK: - Options

var mutations = 5_000
var eventCount = 20_000
var rounds = 3
var rest = CommandLine.arguments.dropFirst()
while let flag = rest.popFirst() {
    switch flag {
    case "--mutations": mutations = Int(rest.popFirst() ?? "") ?? mutations
    case "--events": eventCount = Int(rest.popFirst() ?? "") ?? eventCount
    case "--rounds": rounds = Int(rest.popFirst() ?? "") ?? rounds
    default:
        FileHandle.standardError.write(Data("client-bench: unknown flag \(flag)\n".utf8))
        exit(2)
    }
}

// MARK: - Measuring

/// What one measured run cost this process.
struct Cost {
    var wallNanoseconds: UInt64
    var cpuMicroseconds: Double
    var allocations: UInt64

    static func cpuMicroseconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func micro(_ time: timeval) -> Double { Double(time.tv_sec) * 1e6 + Double(time.tv_usec) }
        return micro(usage.ru_utime) + micro(usage.ru_stime)
    }
}

@MainActor
func measure(_ body: () async throws -> Void) async throws -> Cost {
    let allocations = nv_allocation_count()
    let cpu = Cost.cpuMicroseconds()
    let start = ProcessFigures.now()
    try await body()
    return Cost(
        wallNanoseconds: ProcessFigures.now() - start, cpuMicroseconds: Cost.cpuMicroseconds() - cpu,
        allocations: nv_allocation_count() - allocations)
}

func medianOf(_ values: [Double]) -> Double { Statistics.median(values) ?? 0 }

// The hook must be live, or every allocation figure below would read 0.
let before = nv_allocation_count()
let probe = [Int](repeating: 1, count: 1_000 + Int(before % 7))
guard nv_allocation_count() > before, probe.count > 0 else {
    say("client-bench: the malloc hook is not active; allocation figures would be wrong")
    exit(1)
}

// MARK: - The server

let child = Process()
child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
child.arguments = ["serve"]
let childOutput = Pipe()
let childInput = Pipe()
child.standardOutput = childOutput
child.standardInput = childInput
try child.run()
defer { child.terminate() }
var announced = Data()
while !announced.contains(0x0A) {
    let chunk = childOutput.fileHandleForReading.availableData
    guard !chunk.isEmpty else { throw BenchError("the server child ended before listening") }
    announced.append(chunk)
}
let line = String(decoding: announced, as: UTF8.self).split(separator: "\n").first ?? ""
guard let url = URL(string: String(line.dropFirst("listening on ".count))), let port = url.port else {
    throw BenchError("not a listening line: \(line)")
}
say(
    "client-bench: server child on \(url) (:memory:), \(mutations) mutations and \(eventCount) events per round, \(rounds) rounds; load average at start: \(ProcessFigures.loadAverage())"
)

let thresholds = try Thresholds.load("client")
let client = NavigationValuesClient(baseURL: url)
let schema = SchemaResource(
    values: ["title": .init(type: .string, defaultValue: ""), "counter": .init(type: .integer, defaultValue: 0)],
    preferences: ["selection": .init(type: .string, defaultValue: "")])

// MARK: - 1. Per mutation

let session = try await client.createSession(root: ScreenSeed("Home"), schema: schema)
let raw = try HTTPConnection(port: port)
let valuesPath = "/v1/sessions/\(session.id.rawValue)/screens/root/values"
var sent = 0

@MainActor
func clientMutations(_ count: Int) async throws {
    for _ in 0..<count {
        sent += 1
        try await session.root.set(Title.self, "v\(sent)")
    }
}

@MainActor
func rawMutations(_ count: Int, round: Int) throws {
    for index in 0..<count {
        sent += 1
        let reply = try raw.send(
            "PATCH", valuesPath, token: session.token, headers: ["Idempotency-Key": "k-\(round)-\(index)"],
            body: Array("{\"title\":\"v\(sent)\"}".utf8))
        guard reply.status == 200 else { throw BenchError("PATCH answered \(reply.status): \(reply.text)") }
    }
}

/// The same request through a bare `URLSession`, to show what FoundationNetworking costs beside the
/// client. The client sent through it until its own HTTP/1.1 transport over sockets became the
/// default for `http://` on Linux; the library's "own share" below is then what it adds beside
/// URLSession (negative when it costs less than URLSession alone).
let bareSession = URLSession(configuration: .ephemeral)
@MainActor
func urlSessionMutations(_ count: Int, round: Int) async throws {
    for index in 0..<count {
        sent += 1
        var request = URLRequest(url: url.appendingPathComponent(String(valuesPath.dropFirst())))
        request.httpMethod = "PATCH"
        request.setValue("Bearer \(session.token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("u-\(round)-\(index)", forHTTPHeaderField: "Idempotency-Key")
        request.httpBody = Data("{\"title\":\"v\(sent)\"}".utf8)
        let (_, response) = try await bareSession.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw BenchError("PATCH failed: \(response)") }
    }
}

try await clientMutations(200)  // warm every path up
try rawMutations(200, round: -1)
try await urlSessionMutations(200, round: -1)
var clientCosts: [Cost] = []
var rawCosts: [Cost] = []
var urlSessionCosts: [Cost] = []
for round in 0..<rounds {
    clientCosts.append(try await measure { try await clientMutations(mutations) })
    rawCosts.append(try await measure { try rawMutations(mutations, round: round) })
    urlSessionCosts.append(try await measure { try await urlSessionMutations(mutations, round: round) })
}

@MainActor
func perMutation(_ costs: [Cost], _ figure: (Cost) -> Double) -> Double {
    medianOf(costs.map { figure($0) / Double(mutations) })
}
let clientWall = perMutation(clientCosts) { Double($0.wallNanoseconds) / 1e3 }
let rawWall = perMutation(rawCosts) { Double($0.wallNanoseconds) / 1e3 }
let clientCPU = perMutation(clientCosts, \.cpuMicroseconds)
let rawCPU = perMutation(rawCosts, \.cpuMicroseconds)
let clientAllocations = perMutation(clientCosts) { Double($0.allocations) }
let rawAllocations = perMutation(rawCosts) { Double($0.allocations) }
let bareWall = perMutation(urlSessionCosts) { Double($0.wallNanoseconds) / 1e3 }
let bareCPU = perMutation(urlSessionCosts, \.cpuMicroseconds)
let bareAllocations = perMutation(urlSessionCosts) { Double($0.allocations) }
say(
    String(
        format: "per mutation, wall: client %.1f µs, raw HTTP %.1f µs (ratio %.2f; the server's share is in both)",
        clientWall, rawWall, clientWall / max(rawWall, 1e-9)))
say(
    String(
        format: "per mutation, this process's CPU: client %.1f µs, raw HTTP %.1f µs (ratio %.2f)", clientCPU, rawCPU,
        clientCPU / max(rawCPU, 1e-9)))
say(
    String(
        format: "per mutation, heap allocations: client %.1f, raw HTTP %.1f", clientAllocations, rawAllocations))
say(
    String(
        format:
            "per mutation, a bare URLSession request: wall %.1f µs, CPU %.1f µs, %.1f allocations; the library beside it: CPU %.1f µs, %.1f allocations",
        bareWall, bareCPU, bareAllocations, clientCPU - bareCPU, clientAllocations - bareAllocations))
thresholds.check("maxClientCPUMicrosecondsPerMutation", clientCPU, "client CPU per mutation", unit: "µs")
thresholds.check("maxClientAllocationsPerMutation", clientAllocations, "client allocations per mutation", unit: "")
thresholds.check(
    "maxLibraryAllocationsPerMutation", clientAllocations - bareAllocations,
    "the library's own allocations per mutation",
    unit: "")
thresholds.check(
    "maxClientToRawWallRatio", clientWall / max(rawWall, 1e-9), "client/raw wall time", unit: "", decimals: 2)

// MARK: - 2. Events the mirrors apply

/// A session's recorded events after a snapshot, and the session after the last one: what a mirror
/// applies from memory, and reads from the event stream.
struct Followed {
    var session: RemoteSession
    var snapshot: SessionResource
    var recorded: [RecordedEvent]
    var expected: SessionResource
    var setupVersion: Int64
    var finalVersion: Int64
    /// The server's port, for the raw reader.
    var port: Int

    /// Writes `eventCount` events through `write` (one per call, given its index) after the
    /// session's setup, then reads them back.
    @MainActor
    static func record(_ session: RemoteSession, port: Int, write: (Int) throws -> Void) async throws -> Followed {
        let setupVersion = try await session.get().version
        for index in 0..<eventCount { try write(index) }
        let finalVersion = setupVersion + Int64(eventCount)
        let snapshot = try await session.replay(at: setupVersion)
        var recorded: [RecordedEvent] = []
        var cursor = setupVersion
        while cursor < finalVersion {
            let page = try await session.history(after: cursor, limit: 1_000)
            for case .event(let event) in page.events { recorded.append(event) }
            guard let next = page.next else { break }
            cursor = next
        }
        guard recorded.count == eventCount else { throw BenchError("read \(recorded.count) of \(eventCount) events") }
        return Followed(
            session: session, snapshot: snapshot, recorded: recorded, expected: try await session.get(),
            setupVersion: setupVersion, finalVersion: finalVersion, port: port)
    }

    /// A new mirror (the whole tree, or `RemoteStack` over it) at the snapshot; its `apply`.
    @MainActor
    func mirror(wholeTree: Bool) -> (apply: (SessionStreamItem) -> Bool, resource: () -> SessionResource) {
        if wholeTree {
            let tree = RemoteTree(session: session)
            tree.apply(.snapshot(snapshot))
            return ({ tree.apply($0) }, { tree.resource })
        }
        let stack = RemoteStack(session: session)
        stack.apply(.snapshot(snapshot))
        return ({ stack.apply($0) }, { stack.resource })
    }

    @MainActor
    func applyFromMemory(wholeTree: Bool) throws {
        let mirror = mirror(wholeTree: wholeTree)
        for event in recorded where !mirror.apply(.event(event)) {
            throw BenchError("the mirror refused event \(event.seq)")
        }
        guard mirror.resource() == expected else { throw BenchError("the mirror does not equal the server") }
    }

    @MainActor
    func applyFromStream(wholeTree: Bool) async throws {
        let mirror = mirror(wholeTree: wholeTree)
        for try await item in session.events(after: setupVersion) {
            guard mirror.apply(item) else { throw BenchError("the mirror refused item \(item.seq)") }
            if item.seq == finalVersion { break }
        }
    }

    /// Reads the same stream as raw bytes on a socket, until the last event's `id:` line.
    @MainActor
    func readRawStream() throws {
        let fd = try RawSocket.connect(port: port)
        defer { close(fd) }
        RawSocket.setReceiveTimeout(fd, seconds: 10)
        try RawSocket.sendAll(
            fd,
            Array(
                ("GET /v1/sessions/\(session.id.rawValue)/events?after=\(setupVersion) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Accept: text/event-stream\r\nAuthorization: Bearer \(session.token)\r\n\r\n").utf8))
        let last = Array("\nid: \(finalVersion)\n".utf8)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var tail: [UInt8] = []
        var events = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw BenchError("the raw stream ended after \(events) events") }
            let window = tail + buffer[..<count]
            for index in 0..<max(0, window.count - 4) where window[index] == 0x0A && window[index + 1] == 0x69 {
                if window[index + 2] == 0x64, window[index + 3] == 0x3A { events += 1 }
            }
            if window.count >= last.count,
                (0...(window.count - last.count)).contains(where: {
                    window[$0..<($0 + last.count)].elementsEqual(last)
                })
            {
                return
            }
            tail = Array(window.suffix(last.count + 4))
        }
    }

    /// Events/s from memory and from the stream, beside the raw reader, `rounds` times (medians);
    /// printed, and checked against the thresholds named `keys` (memory, stream, stream/raw).
    @MainActor
    func measureMirror(wholeTree: Bool, _ what: String, keys: (String, String, String)) async throws {
        try applyFromMemory(wholeTree: wholeTree)  // warm-up, and the check that it ends equal to the server
        var memoryCosts: [Cost] = []
        var streamCosts: [Cost] = []
        var rawStreamCosts: [Cost] = []
        for _ in 0..<rounds {
            memoryCosts.append(try await measure { try applyFromMemory(wholeTree: wholeTree) })
            streamCosts.append(try await measure { try await applyFromStream(wholeTree: wholeTree) })
            rawStreamCosts.append(try await measure { try readRawStream() })
        }
        func eventsPerSecond(_ costs: [Cost]) -> Double {
            medianOf(costs.map { Double(eventCount) / (Double($0.wallNanoseconds) / 1e9) })
        }
        func allocationsPerEvent(_ costs: [Cost]) -> Double {
            medianOf(costs.map { Double($0.allocations) / Double(eventCount) })
        }
        let fromMemory = eventsPerSecond(memoryCosts)
        let fromStream = eventsPerSecond(streamCosts)
        let rawStream = eventsPerSecond(rawStreamCosts)
        say(
            String(
                format: "%@, from memory: %.0f events/s, %.1f allocations per event", what, fromMemory,
                allocationsPerEvent(memoryCosts)))
        say(
            String(
                format:
                    "%@, from the event stream: %.0f events/s (%.1f allocations per event); raw socket reading the same stream: %.0f events/s (ratio %.2f)",
                what, fromStream, allocationsPerEvent(streamCosts), rawStream, fromStream / max(rawStream, 1e-9)))
        thresholds.check(keys.0, fromMemory, "\(what) from memory", unit: "events/s", decimals: 0)
        thresholds.check(keys.1, fromStream, "\(what) from the stream", unit: "events/s", decimals: 0)
        thresholds.check(
            keys.2, fromStream / max(rawStream, 1e-9), "\(what) stream/raw stream", unit: "", decimals: 2)
    }
}

/// Sends one request on `connection` that must answer 2xx; its answer.
@discardableResult
func write(_ connection: HTTPConnection, _ session: RemoteSession, _ method: String, _ path: String, _ body: String)
    throws -> HTTPConnection.Reply
{
    let reply = try connection.send(
        method, "/v1/sessions/\(session.id.rawValue)\(path)", token: session.token, body: Array(body.utf8))
    guard reply.status < 300 else { throw BenchError("\(method) \(path) answered \(reply.status): \(reply.text)") }
    return reply
}

// The main stack's mirror (`RemoteStack`), on a 10-screen session: values on the root that reach
// every screen, values on the top, publishes walking back, pushes and pops.
let followed = try await client.createSession(root: ScreenSeed("Home"), schema: schema)
for index in 1..<10 { try await followed.push("S\(index)") }
try await followed.root.setPreferenceHandler(named: "selection", passBack: true)
try await followed.screen(.top).setPreferenceHandler(named: "selection", passBack: true)
let writer = try HTTPConnection(port: port)
let stackEvents = try await Followed.record(followed, port: port) { index in
    switch index % 8 {
    case 0, 4: try write(writer, followed, "PATCH", "/screens/root/values", "{\"title\":\"t\(index)\"}")
    case 1, 5: try write(writer, followed, "PATCH", "/screens/top/values", "{\"counter\":\(index)}")
    case 2, 6:
        try write(writer, followed, "POST", "/screens/top/preferences/selection", "{\"value\":\"p\(index % 7)\"}")
    case 3: try write(writer, followed, "POST", "/push", "{\"name\":\"Extra\"}")
    default: try write(writer, followed, "POST", "/pop", "{\"count\":1}")
    }
}
try await stackEvents.measureMirror(
    wholeTree: false, "mirror",
    keys: ("minMirrorEventsPerSecondFromMemory", "minMirrorEventsPerSecondFromStream", "minMirrorStreamToRawRatio"))

// MARK: - 3. Events the whole-tree mirror applies

// The whole tree (`RemoteTree`), on a session with a main stack of 5 screens, two tabs of 3, a sheet
// of 3 over the main stack and a cover of 2 over the sheet: values on the main root that reach the
// sheet and the cover, values in a tab, publishes from the cover walking back through the sheet to
// the main stack, selections, pushes and pops on a tab, the cover dismissed and presented again,
// and batches on the cover.
let whole = try await client.createSession(root: ScreenSeed("Home"), schema: schema)
for index in 1..<5 { try await whole.push("S\(index)") }
for tab in ["t1", "t2"] {
    try await whole.createStack(StackID(tab), root: ScreenSeed("Root"))
    for index in 1..<3 { try await whole.push(ScreenSeed("T\(index)"), onto: StackID(tab)) }
}
let sheet = try await whole.present(ScreenSeed("Sheet"), from: .top).stack.id
for index in 1..<3 { try await whole.push(ScreenSeed("P\(index)"), onto: sheet) }
var cover = try await whole.present(ScreenSeed("Cover"), style: .fullScreenCover).stack.id
try await whole.push(ScreenSeed("C1"), onto: cover)
try await whole.root.setPreferenceHandler(named: "selection", passBack: true)
try await whole.screen(.topOf(sheet)).setPreferenceHandler(named: "selection", passBack: true)
let treeWriter = try HTTPConnection(port: port)
let treeEvents = try await Followed.record(whole, port: port) { index in
    switch index % 10 {
    case 0: try write(treeWriter, whole, "PATCH", "/screens/root/values", "{\"title\":\"t\(index)\"}")
    case 1: try write(treeWriter, whole, "PATCH", "/screens/t1:top/values", "{\"counter\":\(index)}")
    case 2:
        try write(
            treeWriter, whole, "POST", "/screens/\(cover.rawValue):top/preferences/selection",
            "{\"value\":\"p\(index % 7)\"}")
    case 3: try write(treeWriter, whole, "POST", "/select", "{\"stack\":\"t1\"}")
    case 4: try write(treeWriter, whole, "POST", "/stacks/t2/push", "{\"name\":\"Extra\"}")
    case 5: try write(treeWriter, whole, "POST", "/select", "{\"stack\":\"main\"}")
    case 6: try write(treeWriter, whole, "POST", "/stacks/t2/pop", "{\"count\":1}")
    case 7: try write(treeWriter, whole, "POST", "/dismiss", "{\"stack\":\"\(cover.rawValue)\"}")
    case 8:
        let reply = try write(
            treeWriter, whole, "POST", "/present",
            "{\"from\":\"\(sheet.rawValue):top\",\"style\":\"fullScreenCover\",\"root\":{\"name\":\"Cover\"}}")
        guard let id = reply.json?["stack"]?["id"]?.stringValue else { throw BenchError("no stack: \(reply.text)") }
        cover = StackID(id)
    default:
        let id = cover.rawValue
        try write(
            treeWriter, whole, "POST", "/batch",
            "{\"operations\":[{\"op\":\"push\",\"stack\":\"\(id)\",\"name\":\"C1\"},"
                + "{\"op\":\"setValues\",\"screen\":\"\(id):top\",\"values\":{\"counter\":\(index)}},"
                + "{\"op\":\"pop\",\"stack\":\"\(id)\",\"count\":1}]}")
    }
}
try await treeEvents.measureMirror(
    wholeTree: true, "whole-tree mirror",
    keys: (
        "minTreeMirrorEventsPerSecondFromMemory", "minTreeMirrorEventsPerSecondFromStream",
        "minTreeMirrorStreamToRawRatio"
    ))
say("load average at the end: \(ProcessFigures.loadAverage())")
thresholds.exitWithVerdict()
