import Foundation
import NavigationValues
import Synchronization
import TestSupport
import Testing

/// Set once, read by the load's clients.
final class StopFlag: Sendable {
    private let flag = Atomic<Bool>(false)
    var isSet: Bool { flag.load(ordering: .relaxed) }
    func set() { flag.store(true, ordering: .relaxed) }
}

/// `backup` and `restore` of SQLite files, against a real server under a write load from real
/// clients; and PostgreSQL's route (pg_dump, pg_restore) once.
@Suite struct BackupCommandTests {
    let folder: URL

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("nv-cli-backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// A session the load writes to: its id, its root screen, and each version acknowledged, with
    /// when the answer arrived.
    struct Written: Sendable {
        var id: String
        var screen: String
        var acknowledged: [(version: Int64, at: ContinuousClock.Instant)] = []
    }

    /// Creates a session through `server` with four values of `filler` bytes each in its root
    /// screen (so the file has many pages to copy).
    static func createSession(_ server: ServeProcess, filler: Int) async throws -> Written {
        let value = "\"" + String(repeating: "x", count: filler) + "\""
        let values = (0..<4).map { "\"filler\($0)\": \(value)" }.joined(separator: ", ")
        let body = #"{"root": {"name": "Home", "values": {\#(values)}}}"#
        let created = try await server.send(
            "POST", "/v1/sessions", body: body, headers: ["Authorization": "Bearer admin"])
        guard created.status == 201, let json = created.json, let id = json["id"]?.stringValue,
            let screen = json["screens"]?.arrayValue?.first?["id"]?.stringValue
        else { throw ChildProcessError("create: \(created.status) \(created.text)") }
        return Written(id: id, screen: screen)
    }

    /// `sqlite3 FILE SQL`'s output: a reader that is not ours.
    static func sqlite3(_ file: String, _ sql: String) async throws -> String {
        let outcome = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), arguments: [file, sql])
        guard outcome.status == 0 else { throw ChildProcessError("sqlite3 \(sql): \(outcome)") }
        return outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func aBackupDuringAWriteLoadHoldsEveryAcknowledgedWriteAndRestores() async throws {
        let server = try await ServeProcess(["--admin-token", "admin"])
        let live = server.folder.appendingPathComponent("navigation-values.sqlite").path
        // About 24 MB of pages (sessions, their history), so the copy takes several steps.
        var sessions: [Written] = []
        for _ in 0..<48 { sessions.append(try await Self.createSession(server, filler: 60_000)) }
        let writers = Array(sessions.prefix(8))

        // The load: one client per session, each changing a value as fast as it is answered.
        let stop = StopFlag()
        let load = Task {
            try await withThrowingTaskGroup(of: Written.self) { group in
                for session in writers {
                    group.addTask {
                        var session = session
                        var counter = 0
                        while !stop.isSet {
                            counter += 1
                            let answer = try await server.send(
                                "PATCH", "/v1/sessions/\(session.id)/screens/\(session.screen)/values",
                                body: #"{"counter": \#(counter)}"#, headers: ["Authorization": "Bearer admin"])
                            guard answer.status == 200, let version = answer.json?["version"]?.integerValue else {
                                throw ChildProcessError("PATCH: \(answer.status) \(answer.text)")
                            }
                            session.acknowledged.append((version, ContinuousClock.now))
                        }
                        return session
                    }
                }
                var finished: [Written] = []
                for try await session in group { finished.append(session) }
                return finished
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let started = ContinuousClock.now
        let backup = try await run(["backup", "--db", live, "--to", path("copy.sqlite")])
        let took = ContinuousClock.now - started
        try await Task.sleep(for: .milliseconds(200))
        stop.set()
        let written = try await load.value
        #expect(backup.status == 0, "\(backup)")
        #expect(backup.stdout.hasPrefix("backed up \(live) to \(path("copy.sqlite")): "), "\(backup.stdout)")
        #expect(backup.stdout.hasSuffix(", integrity ok\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["copy.sqlite"])
        #expect(took < .seconds(60))

        // Every write acknowledged before the backup started is in the copy; the load went on
        // during it; and each session in the copy is the live one at the copy's version.
        #expect(try await Self.sqlite3(path("copy.sqlite"), "PRAGMA integrity_check") == "ok")
        for session in written {
            let before = session.acknowledged.last { $0.at < started }?.version ?? 1
            let after = session.acknowledged.last?.version ?? 1
            let copied = try await run(["replay", "--db", path("copy.sqlite"), session.id])
            #expect(copied.status == 0, "\(copied)")
            let copiedVersion = try #require(try JSONValue(parsing: Array(copied.stdout.utf8))["version"]?.integerValue)
            #expect(copiedVersion >= before, "\(session.id): \(copiedVersion) < \(before)")
            #expect(after > copiedVersion, "\(session.id): no write after the copy's snapshot")
            let liveThen = try await run(["replay", "--db", live, session.id, "--at", "\(copiedVersion)"])
            #expect(liveThen.stdout == copied.stdout, "\(session.id) at \(copiedVersion)")
        }
        let idle = sessions[20]
        let idleCopy = try await run(["replay", "--db", path("copy.sqlite"), idle.id])
        #expect(idleCopy.stdout == (try await run(["replay", "--db", live, idle.id])).stdout)

        // While the server has the file open, restore refuses it and changes nothing.
        let refused = try await run(["restore", "--from", path("copy.sqlite"), "--db", live, "--replace", "yes"])
        #expect(refused.status == 1)
        #expect(
            refused.stderr.contains(
                "is in use: another process (a server?) has it open; stop it, then run restore again"),
            "\(refused.stderr)")
        let stillServed = try await server.send(
            "GET", "/v1/sessions/\(writers[0].id)", headers: ["Authorization": "Bearer admin"])
        #expect(
            stillServed.json?["version"]?.integerValue
                == written.first { $0.id == writers[0].id }?.acknowledged.last?.version)
        #expect(try await server.stop().status == 0)

        // Stopped: restore over the live file (asked with --replace), then serve it again.
        let notAsked = try await run(["restore", "--from", path("copy.sqlite"), "--db", live])
        #expect(notAsked.status == 1)
        #expect(notAsked.stderr.contains("exists; pass --replace to overwrite it"), "\(notAsked.stderr)")
        let restored = try await run(["restore", "--from", path("copy.sqlite"), "--db", live, "--replace", "yes"])
        #expect(restored.status == 0, "\(restored)")
        #expect(restored.stdout.hasPrefix("restored \(path("copy.sqlite")) into \(live): "))
        #expect(try await Self.sqlite3(live, "PRAGMA integrity_check") == "ok")
        let again = try await ServeProcess(["--admin-token", "admin", "--db", live])
        for session in written {
            let copied = try await run(["replay", "--db", path("copy.sqlite"), session.id])
            let served = try await again.send(
                "GET", "/v1/sessions/\(session.id)", headers: ["Authorization": "Bearer admin"])
            #expect(served.status == 200)
            #expect(served.json?["version"] == (try JSONValue(parsing: Array(copied.stdout.utf8)))["version"])
            #expect(served.json?["screens"] == (try JSONValue(parsing: Array(copied.stdout.utf8)))["screens"])
        }
        // The restored file takes writes again, in write-ahead-log mode.
        let patched = try await again.send(
            "PATCH", "/v1/sessions/\(writers[0].id)/screens/\(writers[0].screen)/values", body: #"{"counter": -1}"#,
            headers: ["Authorization": "Bearer admin"])
        #expect(patched.status == 200)
        #expect(try await again.stop().status == 0)
        #expect(try await Self.sqlite3(live, "PRAGMA journal_mode") == "wal")
        try? FileManager.default.removeItem(at: folder)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")))
    func restoreChecksTheCopyFirst() async throws {
        let database = path("source.sqlite")
        let migrated = try await run(["migrate", "--db", database])
        let version = migrated.stdout.split(separator: "\n").count - 1
        #expect(try await run(["backup", "--db", database, "--to", path("good.sqlite")]).status == 0)

        // A copy with damaged pages: the integrity check (or the open) says so.
        try FileManager.default.copyItem(atPath: path("good.sqlite"), toPath: path("damaged.sqlite"))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path("damaged.sqlite")))
        try handle.seek(toOffset: 4096)
        try handle.write(contentsOf: Data(repeating: 0x5A, count: 8192))
        try handle.close()
        let damaged = try await run(["restore", "--from", path("damaged.sqlite"), "--db", path("target.sqlite")])
        #expect(damaged.status == 1)
        #expect(
            damaged.stderr.hasPrefix("error: restore of '\(path("damaged.sqlite"))' into '\(path("target.sqlite"))': "))
        #expect(
            damaged.stderr.contains("fails SQLite's integrity check") || damaged.stderr.contains("cannot be read"),
            "\(damaged.stderr)")

        // A copy made by a newer release (one more migration than this binary knows).
        try FileManager.default.copyItem(atPath: path("good.sqlite"), toPath: path("newer.sqlite"))
        _ = try await Self.sqlite3(
            path("newer.sqlite"),
            "INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (\(version + 1), 'future', 'x', 0)"
        )
        let newer = try await run(["restore", "--from", path("newer.sqlite"), "--db", path("target.sqlite")])
        #expect(newer.status == 1)
        #expect(newer.stderr.contains("newer than this binary"), "\(newer.stderr)")

        // Not a database of ours at all.
        _ = try await Self.sqlite3(path("other.sqlite"), "CREATE TABLE t (x)")
        let other = try await run(["restore", "--from", path("other.sqlite"), "--db", path("target.sqlite")])
        #expect(other.status == 1)
        #expect(other.stderr.contains("not a NavigationValues database"), "\(other.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("target.sqlite")))

        // The good copy restores into a new file.
        let restored = try await run(["restore", "--from", path("good.sqlite"), "--db", path("target.sqlite")])
        #expect(restored.status == 0, "\(restored)")
        #expect(restored.stdout.contains("schema version \(version)"))
        try? FileManager.default.removeItem(at: folder)
    }

    @Test func backupRefusesWhatItCannotDo() async throws {
        let database = path("source.sqlite")
        #expect(try await run(["migrate", "--db", database]).status == 0)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: path("exists.sqlite")))
        let exists = try await run(["backup", "--db", database, "--to", path("exists.sqlite")])
        #expect(exists.status == 1)
        #expect(exists.stderr.contains("exists; a backup never overwrites a file"), "\(exists.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: path("exists.sqlite"))) == Data("keep".utf8))

        let missing = try await run(["backup", "--db", path("missing.sqlite"), "--to", path("copy.sqlite")])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("'\(path("missing.sqlite"))' does not exist"), "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path("missing.sqlite")))

        let usage: [([String], String)] = [
            (["backup", "--to", "x"], "backup needs --db FILE"),
            (["backup", "--db", database], "backup needs --to FILE"),
            (
                ["backup", "--db", "postgres://nv@127.0.0.1/nv", "--to", "x"],
                "backup takes a SQLite file; for PostgreSQL use pg_dump and pg_restore (docs/Operations.md, \"Backups\")"
            ),
            (["restore", "--db", database], "restore needs --from FILE"),
            (
                ["restore", "--from", "x", "--db", database, "--replace", "maybe"],
                "--replace must be yes or no, not 'maybe'"
            ),
        ]
        for (arguments, message) in usage {
            #expect(
                try await run(arguments)
                    == Outcome(
                        status: 2, stdout: "",
                        stderr: "error: \(message)\nRun 'navigation-values \(arguments[0]) --help' for usage.\n"))
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// docs/Operations.md's PostgreSQL route, once: pg_dump of a served database, pg_restore into
    /// an empty one, and the sessions read back alike.
    @Test(.enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.unavailableReason)))
    func postgresBackupsGoThroughPgDumpAndPgRestore() async throws {
        let tools = try #require(Self.postgresTools, "no pg_dump and pg_restore under /usr/lib/postgresql")
        try await PostgresTestServer.withDatabase { source in
            try await PostgresTestServer.withDatabase { target in
                let server = try await ServeProcess(
                    ["--admin-token", "admin"], environment: ["NAVIGATION_VALUES_DB": source])
                let session = try await Self.createSession(server, filler: 16)
                for counter in 1...5 {
                    let answer = try await server.send(
                        "PATCH", "/v1/sessions/\(session.id)/screens/\(session.screen)/values",
                        body: #"{"counter": \#(counter)}"#, headers: ["Authorization": "Bearer admin"])
                    #expect(answer.status == 200)
                }
                // pg_dump reads one snapshot: it runs beside the server.
                let dump = path("navigation-values.dump")
                let dumped = try await ChildProcess.run(
                    tools.appendingPathComponent("pg_dump"), arguments: ["--format=custom", "--file=\(dump)", source])
                #expect(dumped.status == 0, "\(dumped)")
                #expect(try await server.stop().status == 0)
                let restored = try await ChildProcess.run(
                    tools.appendingPathComponent("pg_restore"),
                    arguments: ["--exit-on-error", "--no-owner", "--dbname=\(target)", dump])
                #expect(restored.status == 0, "\(restored)")

                let migrated = try await run(["migrate", "--db", target])
                #expect(migrated.status == 0, "\(migrated)")
                #expect(!migrated.stdout.contains("applied"))
                let fromSource = try await run(["replay", "--db", source, session.id])
                let fromTarget = try await run(["replay", "--db", target, session.id])
                #expect(fromTarget.status == 0, "\(fromTarget)")
                #expect(fromTarget.stdout == fromSource.stdout)
                #expect(try JSONValue(parsing: Array(fromTarget.stdout.utf8))["version"] == 6)
                let again = try await ServeProcess(
                    ["--admin-token", "admin"], environment: ["NAVIGATION_VALUES_DB": target])
                let answer = try await again.send(
                    "PATCH", "/v1/sessions/\(session.id)/screens/\(session.screen)/values", body: #"{"counter": 6}"#,
                    headers: ["Authorization": "Bearer admin"])
                #expect(answer.json?["version"] == 7)
                #expect(try await again.stop().status == 0)
            }
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// pg_dump and pg_restore of the newest PostgreSQL under /usr/lib/postgresql (the major
    /// version of the test cluster's server, or newer: pg_dump reads older servers, not newer).
    static let postgresTools: URL? = {
        let root = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init)
        return versions.sorted().reversed().map { URL(fileURLWithPath: "\(root)/\($0)/bin") }.first {
            FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("pg_dump").path)
                && FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("pg_restore").path)
        }
    }()
}
