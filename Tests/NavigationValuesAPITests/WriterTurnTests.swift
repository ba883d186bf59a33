import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesPostgres
import NavigationValuesSessions
import NavigationValuesStore
import TestSupport
import Testing

/// Writers of one session on two instances sharing a PostgreSQL database: the database orders
/// them. A writer whose commit meets another's waits its turn on the session's row and runs
/// again; none is refused because another was first.
@Suite(.needsPostgres) struct WriterTurnTests {
    static let writers = 16
    static let pushes = 50

    /// What this test checks is that no writer is refused because others wrote first, not how long
    /// a turn takes: its servers wait for a turn far longer than the default 10 s, past which a
    /// writer gets its 503. Both bounds are raised: `maxWriteWait`, and PostgreSQL's
    /// `statement_timeout`, which ends a statement still waiting for the session's row. 800 commits
    /// queued on a few connections passed each of them under ThreadSanitizer (one push refused,
    /// 503 store-unavailable).
    static func patientWriters(_ configuration: inout NavigationValuesServer.Configuration) {
        configuration.service.maxWriteWait = .seconds(300)
        configuration.postgres.statementTimeout = .seconds(300)
    }

    @Test func sixteenWritersOnTwoInstancesAreAllAcknowledgedGapFreeAndInOrder() async throws {
        try await PostgresTestServer.withDatabase { url in
            try await withRunningServer(databasePath: url, configure: Self.patientWriters) { a, instanceA in
                try await withRunningServer(databasePath: url, configure: Self.patientWriters) { b, instanceB in
                    let created = try await TestSession.create(a)
                    let sessions = [a, b].map {
                        TestSession(client: $0, id: created.id, token: created.token, created: created.created)
                    }
                    let answers = try await Self.push(on: sessions)

                    // Every push acknowledged, none refused (no 503 because others wrote first).
                    for (writer, pushes) in answers.enumerated() {
                        let refused = pushes.filter { $0.status != 201 }
                        #expect(refused.isEmpty, "writer \(writer): \(refused.first?.body ?? "")")
                    }
                    // One version each, without gaps, and each writer's in the order it sent them.
                    let versions = answers.flatMap { $0.compactMap(\.version) }.sorted()
                    let expected = Array(2...Int64(1 + Self.writers * Self.pushes))
                    #expect(
                        versions == expected,
                        "\(versions.count) versions, first missing: \(Set(expected).subtracting(versions).min() ?? 0)")
                    for (writer, pushes) in answers.enumerated() {
                        let mine = pushes.compactMap(\.version)
                        #expect(mine == mine.sorted(), "writer \(writer)'s pushes out of order")
                    }
                    // The stack holds every screen once, each writer's in its order.
                    let names = (try await sessions[1].get()["screens"]?.arrayValue ?? []).compactMap {
                        $0["name"]?.stringValue
                    }
                    #expect(names.count == 1 + Self.writers * Self.pushes)
                    for writer in 0..<Self.writers {
                        let mine = names.filter { $0.hasPrefix("w\(writer)-") }
                        #expect(mine == (0..<Self.pushes).map { "w\(writer)-\($0)" }, "writer \(writer)'s screens")
                    }
                    // The writers met (conflicts), and some waited for their turn.
                    let metrics = [instanceA.store.metrics, instanceB.store.metrics]
                    let conflicts = metrics.map(\.conflicts).reduce(0, +)
                    let turns = metrics.map(\.turns).reduce(0, +)
                    #expect(conflicts > 0, "no writers met: the test did not test turns")
                    #expect(turns > 0 && turns <= conflicts, "\(turns) turns for \(conflicts) conflicts")
                }
            }
        }
    }

    /// Each writer's pushes, sent one after another through instance `writer % 2`: each
    /// answer's status, version and body.
    static func push(on sessions: [TestSession]) async throws -> [[(status: Int, version: Int64?, body: String)]] {
        try await withThrowingTaskGroup(of: (Int, [(status: Int, version: Int64?, body: String)]).self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var answers: [(status: Int, version: Int64?, body: String)] = []
                    for push in 0..<pushes {
                        let answer = try await sessions[writer % 2].send(
                            "POST", "/push", json: ["name": .string("w\(writer)-\(push)")])
                        answers.append(
                            (
                                answer.status, answer.json?["version"]?.integerValue,
                                String(decoding: answer.body, as: UTF8.self)
                            ))
                    }
                    return (writer, answers)
                }
            }
            var all = [[(status: Int, version: Int64?, body: String)]](repeating: [], count: writers)
            for try await (writer, answers) in group { all[writer] = answers }
            return all
        }
    }
}
