// store-bench: write and replay speed of SQLiteSessionStore on a temporary file.
//
//     swift run --package-path Benchmarks -c release store-bench [EVENTS]
//
// Prints events appended per second with group commit (64 concurrent writers) and with one
// commit per event (a single writer, serial), for both sync modes, then how fast events are
// read back for replay; compares them with Benchmarks/Thresholds/store.json (exit 1 when one is
// not met).
import BenchmarkSupport
import Foundation
import NavigationValues
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire

let eventCount = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 20_000 : 20_000

func mutation(session: SessionID, seq: Int64) -> StoredMutation {
    let now = Date()
    let root = ScreenID("c_\(session.rawValue)_root")
    var changes: [StateChange] = []
    if seq == 1 {
        changes.append(
            .insertSession(
                SessionRecord(
                    id: session, version: 1, state: .active, schemaJSON: "{}", tokenHash: "00", createdAt: now,
                    updatedAt: now)))
        changes.append(
            .insertScreen(
                ScreenRecord(id: root, session: session, index: 0, name: "Home", role: "screen", previous: nil)))
    } else {
        changes.append(.updateSession(session, version: seq, state: .active, updatedAt: now))
    }
    changes.append(.setValue(root, key: "title", json: #""title \#(seq)""#))
    let json =
        #"{"seq":\#(seq),"type":"values.updated","screen":"\#(root)","set":{"title":"title \#(seq)"},"removed":[]}"#
    let event = StoredEvent(session: session, seq: seq, type: "values.updated", json: json, at: now)
    return StoredMutation(session: session, event: event, changes: changes)
}

/// Appends `eventCount` events from `writers` concurrent tasks, one session each; returns
/// events per second and the store's figures.
func append(writers: Int, sync: SQLiteSessionStore.SyncMode, in directory: URL) async throws -> (Double, StoreMetrics) {
    var configuration = SQLiteSessionStore.Configuration()
    configuration.sync = sync
    let path = directory.appendingPathComponent("append-\(writers)-\(sync).sqlite").path
    let store = try SQLiteSessionStore(path: path, configuration: configuration)
    let perWriter = eventCount / writers
    let start = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in 0..<writers {
            group.addTask {
                let session = SessionID("s_\(writer)")
                for seq in 1...Int64(perWriter) {
                    try await store.commit(mutation(session: session, seq: seq))
                }
            }
        }
        try await group.waitForAll()
    }
    let elapsed = ContinuousClock.now - start
    let metrics = store.metrics
    await store.close()
    return (Double(perWriter * writers) / Statistics.seconds(elapsed), metrics)
}

/// Writes one session of `eventCount` events, then reads them all back in pages of 1,000.
func replay(in directory: URL) async throws -> Double {
    let store = try SQLiteSessionStore(path: directory.appendingPathComponent("replay.sqlite").path)
    let session = SessionID("s_replay")
    // In transactions of 1,000 events, in order: each event's commit expects the one before it
    // (concurrent commits of one session could reach the writer in any order, and conflict).
    var seq: Int64 = 1
    while seq <= Int64(eventCount) {
        let last = min(Int64(eventCount), seq + 999)
        try await store.commitAll((seq...last).map { mutation(session: session, seq: $0) })
        seq = last + 1
    }
    let start = ContinuousClock.now
    var read = 0
    var after: Int64 = 0
    while true {
        let page = try await store.events(of: session, after: after, limit: 1_000)
        guard let last = page.last else { break }
        read += page.count
        after = last.seq
    }
    let elapsed = ContinuousClock.now - start
    await store.close()
    precondition(read == eventCount, "replay read \(read) of \(eventCount) events")
    return Double(read) / Statistics.seconds(elapsed)
}

func figure(_ value: Double) -> String { String(Int(value.rounded())) }

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-bench-\(UUID().uuidString)")
do {
    let thresholds = try Thresholds.load("store")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    say("store-bench: \(eventCount) events per run, file in \(directory.path)")
    for sync in SQLiteSessionStore.SyncMode.allCases {
        let (grouped, groupedMetrics) = try await append(writers: 64, sync: sync, in: directory)
        let (serial, _) = try await append(writers: 1, sync: sync, in: directory)
        say(
            "sync=\(sync): group commit, 64 writers: \(figure(grouped)) events/s "
                + "(avg batch \(String(format: "%.1f", groupedMetrics.averageBatchSize)), "
                + "max \(groupedMetrics.largestBatch)); one commit per event, 1 writer: \(figure(serial)) events/s; "
                + "ratio \(String(format: "%.1f", grouped / serial))x")
        let mode = sync.rawValue.prefix(1).uppercased() + sync.rawValue.dropFirst()
        thresholds.check(
            "minGroupCommitEventsPerSecond\(mode)", grouped, "sync=\(sync): group commit", unit: "events/s", decimals: 0
        )
        thresholds.check(
            "minGroupCommitSpeedup\(mode)", grouped / serial, "sync=\(sync): group commit / one commit per event",
            unit: "x")
    }
    let replayed = try await replay(in: directory)
    say("replay: \(figure(replayed)) events/s read back (pages of 1000)")
    thresholds.check("minReplayEventsPerSecond", replayed, "replay: read back", unit: "events/s", decimals: 0)
    try? FileManager.default.removeItem(at: directory)
    thresholds.exitWithVerdict()
} catch {
    FileHandle.standardError.write(Data("store-bench: \(error)\n".utf8))
    exit(1)
}
