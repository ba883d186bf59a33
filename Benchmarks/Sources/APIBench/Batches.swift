import BenchmarkSupport
import Foundation
import NavigationValues
import NavigationValuesAPI

// K operations as one batch (one request, one event, one commit) against the same K
// operations as single requests, on a durable database.

/// Operations per second on every connection until `seconds` have passed: each turn sends K
/// push/pop operations (push, pop, push, pop, …, so stacks do not grow), as one `POST …/batch`
/// when `batched`, else as K requests.
func operationLoad(
    port: Int, sessions: [BenchSession], connections: Int, seconds: Double, operations: Int, batched: Bool
) async throws -> Double {
    let pushBody = Array(#"{"name":"Detail","values":{"title":"bench"}}"#.utf8)
    let popBody = Array(#"{"count":1}"#.utf8)
    let steps = (0..<operations).map { index -> JSONValue in
        index % 2 == 0 ? ["op": "push", "name": "Detail", "values": ["title": "bench"]] : ["op": "pop"]
    }
    let batchBody = Array(JSONValue.object(["operations": .array(steps)]).serialized().utf8)
    let start = DispatchTime.now().uptimeNanoseconds
    let deadline = start + UInt64(seconds * 1e9)
    let perConnection = await onThreads(connections) { index -> Result<Int, BenchError> in
        do {
            let connection = try HTTPConnection(port: port)
            let mine = stride(from: index, to: sessions.count, by: connections).map { sessions[$0] }
            var done = 0
            var turn = 0
            while DispatchTime.now().uptimeNanoseconds < deadline, !mine.isEmpty {
                let session = mine[turn % mine.count]
                turn += 1
                if batched {
                    let answer = try connection.send(
                        "POST", "/v1/sessions/\(session.id)/batch", token: session.token, body: batchBody)
                    guard answer.status == 200 else { return .failure(BenchError("batch \(answer.status)")) }
                } else {
                    for step in 0..<operations {
                        let isPush = step % 2 == 0
                        let answer = try connection.send(
                            "POST", "/v1/sessions/\(session.id)/\(isPush ? "push" : "pop")", token: session.token,
                            body: isPush ? pushBody : popBody)
                        guard answer.status == (isPush ? 201 : 200) else {
                            return .failure(BenchError("single \(answer.status)"))
                        }
                    }
                }
                done += operations
            }
            return .success(done)
        } catch {
            return .failure(BenchError("\(error)"))
        }
    }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    var done = 0
    for result in perConnection { done += try result.get() }
    return Double(done) / elapsed
}

func batches(_ options: Options, _ thresholds: Thresholds) async throws {
    let (folder, path) = try temporaryDatabase()
    defer { try? FileManager.default.removeItem(at: folder) }
    let server = try await startServer(database: path)
    do {
        let seconds = max(1, options.seconds / 2)
        let k = options.batchOperations
        let sessions = try await createSessions(
            port: server.port, count: options.sessions, connections: options.connections,
            root: ["name": "Home"], path: nil)
        _ = try await operationLoad(
            port: server.port, sessions: sessions, connections: options.connections, seconds: min(1, seconds),
            operations: k, batched: true)
        // One connection: what a client making a change of K steps waits for; then every connection.
        var ratios: [Double] = []
        for connections in [1, options.connections] {
            say("\(k) push/pop operations per turn, \(connections) connection(s), durable (file), \(seconds) s each")
            let single = try await operationLoad(
                port: server.port, sessions: sessions, connections: connections, seconds: seconds, operations: k,
                batched: false)
            let batched = try await operationLoad(
                port: server.port, sessions: sessions, connections: connections, seconds: seconds, operations: k,
                batched: true)
            say(String(format: "  single requests: %.0f operations/s", single))
            say(
                String(
                    format: "  batches of %d: %.0f operations/s (%.0f batches/s): %.1fx the single requests", k,
                    batched, batched / Double(k), batched / single))
            ratios.append(batched / single)
        }
        await server.shutdown()
        thresholds.check(
            "minBatchToSingleOperationsRatio", ratios[0], "batch / single operations, one connection", unit: "",
            decimals: 1)
    } catch {
        await server.shutdown()
        throw error
    }
}
