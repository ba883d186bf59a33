// store-crash-helper PATH [normal|full] [WRITERS]
//
// Commits mutations to the store at PATH forever, from WRITERS concurrent tasks (one session
// each, 8 by default), and prints one line `SESSION SEQ` to stdout after each commit is
// acknowledged. The durability test kills it with SIGKILL and checks that every printed
// commit is in the file.
import Foundation
import NavigationValues
import NavigationValuesSQLite
import NavigationValuesStore
import NavigationValuesWire

let arguments = CommandLine.arguments
guard arguments.count >= 2,
    let sync = SQLiteSessionStore.SyncMode(rawValue: arguments.count > 2 ? arguments[2] : "normal"),
    let writers = Int(arguments.count > 3 ? arguments[3] : "8"), writers > 0
else {
    FileHandle.standardError.write(Data("usage: store-crash-helper PATH [normal|full] [WRITERS]\n".utf8))
    exit(2)
}

var configuration = SQLiteSessionStore.Configuration()
configuration.sync = sync
// The server's write path: events committed first, state rows written behind them.
configuration.writeBehind = .standard
let store: SQLiteSessionStore
do {
    store = try SQLiteSessionStore(path: arguments[1], configuration: configuration)
} catch {
    FileHandle.standardError.write(Data("store-crash-helper: \(error)\n".utf8))
    exit(1)
}

/// One `write(2)` per line, so lines from concurrent writers never interleave and nothing
/// waits in a buffer when the process is killed.
func acknowledge(_ session: SessionID, _ seq: Int64) {
    FileHandle.standardOutput.write(Data("\(session) \(seq)\n".utf8))
}

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
    changes.append(.setValue(root, key: "counter", json: "\(seq)"))
    let event = StoredEvent(
        session: session, seq: seq, type: "values.updated", json: #"{"seq":\#(seq),"type":"values.updated"}"#, at: now)
    let snapshot = seq % 50 == 0 ? StoredSnapshot(session: session, seq: seq, json: #"{"version":\#(seq)}"#) : nil
    return StoredMutation(session: session, event: event, changes: changes, snapshot: snapshot)
}

await withTaskGroup(of: Void.self) { group in
    for writer in 0..<writers {
        group.addTask {
            let session = SessionID("s_\(writer)")
            var seq: Int64 = 1
            while true {
                do {
                    try await store.commit(mutation(session: session, seq: seq))
                } catch {
                    FileHandle.standardError.write(Data("store-crash-helper: \(error)\n".utf8))
                    exit(1)
                }
                acknowledge(session, seq)
                seq += 1
            }
        }
    }
}
