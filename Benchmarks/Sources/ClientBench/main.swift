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
//      (`session.events(after:)` into the mirror) against a raw socket reading the same stream.
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
    "client-bench: server child on \(url) (:memory:), \(mutations) mutations and \(eventCount) events per round, \(rounds) rounds"
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

/// The same request through a bare `URLSession` (what the client is built on), to show which part
/// of the client's cost is FoundationNetworking's.
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
            "per mutation, a bare URLSession request (what the client sends through): wall %.1f µs, CPU %.1f µs, %.1f allocations; the library's own share: CPU %.1f µs, %.1f allocations",
        bareWall, bareCPU, bareAllocations, clientCPU - bareCPU, clientAllocations - bareAllocations))
thresholds.check("maxClientCPUMicrosecondsPerMutation", clientCPU, "client CPU per mutation", unit: "µs")
thresholds.check("maxClientAllocationsPerMutation", clientAllocations, "client allocations per mutation", unit: "")
thresholds.check(
    "maxLibraryAllocationsPerMutation", clientAllocations - bareAllocations,
    "the library's own allocations per mutation",
    unit: "")
thresholds.check(
    "maxClientToRawWallRatio", clientWall / max(rawWall, 1e-9), "client/raw wall time", unit: "", decimals: 2)

// MARK: - 2. Events the mirror applies

let followed = try await client.createSession(root: ScreenSeed("Home"), schema: schema)
let followedPath = "/v1/sessions/\(followed.id.rawValue)"
for index in 1..<10 { try await followed.push("S\(index)") }
try await followed.root.setPreferenceHandler(named: "selection", passBack: true)
try await followed.screen(.top).setPreferenceHandler(named: "selection", passBack: true)
let setupVersion = try await followed.get().version
let writer = try HTTPConnection(port: port)
for index in 0..<eventCount {
    let (method, path, body): (String, String, String) =
        switch index % 8 {
        case 0, 4: ("PATCH", "\(followedPath)/screens/root/values", "{\"title\":\"t\(index)\"}")
        case 1, 5: ("PATCH", "\(followedPath)/screens/top/values", "{\"counter\":\(index)}")
        case 2, 6: ("POST", "\(followedPath)/screens/top/preferences/selection", "{\"value\":\"p\(index % 7)\"}")
        case 3: ("POST", "\(followedPath)/push", "{\"name\":\"Extra\"}")
        default: ("POST", "\(followedPath)/pop", "{\"count\":1}")
        }
    let reply = try writer.send(method, path, token: followed.token, body: Array(body.utf8))
    guard reply.status < 300 else { throw BenchError("\(method) \(path) answered \(reply.status): \(reply.text)") }
}
let finalVersion = setupVersion + Int64(eventCount)
let snapshot = try await followed.replay(at: setupVersion)
var recorded: [RecordedEvent] = []
var cursor = setupVersion
while cursor < finalVersion {
    let page = try await followed.history(after: cursor, limit: 1_000)
    for case .event(let event) in page.events { recorded.append(event) }
    guard let next = page.next else { break }
    cursor = next
}
guard recorded.count == eventCount else { throw BenchError("read \(recorded.count) of \(eventCount) events") }
let expected = try await followed.get()

@MainActor
func applyFromMemory() throws {
    let mirror = RemoteStack(session: followed)
    mirror.apply(.snapshot(snapshot))
    for event in recorded where !mirror.apply(.event(event)) {
        throw BenchError("the mirror refused event \(event.seq)")
    }
    guard mirror.resource == expected else { throw BenchError("the mirror does not equal the server") }
}

@MainActor
func applyFromStream() async throws {
    let mirror = RemoteStack(session: followed)
    mirror.apply(.snapshot(snapshot))
    for try await item in followed.events(after: setupVersion) {
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
            ("GET \(followedPath)/events?after=\(setupVersion) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Accept: text/event-stream\r\nAuthorization: Bearer \(followed.token)\r\n\r\n").utf8))
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
            (0...(window.count - last.count)).contains(where: { window[$0..<($0 + last.count)].elementsEqual(last) })
        {
            return
        }
        tail = Array(window.suffix(last.count + 4))
    }
}

try applyFromMemory()  // warm-up, and the check that the mirror ends equal to the server
var memoryCosts: [Cost] = []
var streamCosts: [Cost] = []
var rawStreamCosts: [Cost] = []
for _ in 0..<rounds {
    memoryCosts.append(try await measure { try applyFromMemory() })
    streamCosts.append(try await measure { try await applyFromStream() })
    rawStreamCosts.append(try await measure { try readRawStream() })
}
@MainActor
func eventsPerSecond(_ costs: [Cost]) -> Double {
    medianOf(costs.map { Double(eventCount) / (Double($0.wallNanoseconds) / 1e9) })
}
@MainActor
func allocationsPerEvent(_ costs: [Cost]) -> Double {
    medianOf(costs.map { Double($0.allocations) / Double(eventCount) })
}
let fromMemory = eventsPerSecond(memoryCosts)
let fromStream = eventsPerSecond(streamCosts)
let rawStream = eventsPerSecond(rawStreamCosts)
say(
    String(
        format: "mirror, from memory: %.0f events/s, %.1f allocations per event", fromMemory,
        allocationsPerEvent(memoryCosts)))
say(
    String(
        format:
            "mirror, from the event stream: %.0f events/s (%.1f allocations per event); raw socket reading the same stream: %.0f events/s (ratio %.2f)",
        fromStream, allocationsPerEvent(streamCosts), rawStream, fromStream / max(rawStream, 1e-9)))
thresholds.check("minMirrorEventsPerSecondFromMemory", fromMemory, "mirror from memory", unit: "events/s", decimals: 0)
thresholds.check(
    "minMirrorEventsPerSecondFromStream", fromStream, "mirror from the stream", unit: "events/s", decimals: 0)
thresholds.check(
    "minMirrorStreamToRawRatio", fromStream / max(rawStream, 1e-9), "mirror stream/raw stream", unit: "", decimals: 2)
thresholds.exitWithVerdict()
