import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The PostgreSQL server the PostgreSQL tests run against, and a fresh database per test.
///
/// - `NAVIGATION_VALUES_TEST_POSTGRES_URL` set (as `.ci/run` does, for a throwaway cluster it
///   starts): a URL of a role that may create databases, such as
///   `postgres://postgres@127.0.0.1:54329/postgres`.
/// - Otherwise, when PostgreSQL's `initdb` and `postgres` are installed (Debian's `postgresql`),
///   the first test that asks starts a throwaway cluster of its own in a temporary folder, as a
///   child that dies with the test process (as the `postgres` user when the tests run as root).
/// - Otherwise the PostgreSQL tests are disabled, and say so: each is marked
///   `.enabled(if: PostgresTestServer.isAvailable, Comment(rawValue: PostgresTestServer.unavailableReason))`.
///
/// ```swift
/// @Test(.needsPostgres)
/// func works() async throws {
///     try await PostgresTestServer.withDatabase { url in … }
/// }
/// ```
public enum PostgresTestServer {
    /// The variable that names the server (see above).
    public static let variable = "NAVIGATION_VALUES_TEST_POSTGRES_URL"

    /// Why PostgreSQL tests did not run, shown by the test runner beside each skipped test.
    public static let unavailableReason =
        "PostgreSQL tests did not run: set NAVIGATION_VALUES_TEST_POSTGRES_URL, or install Debian's postgresql so the tests can start a throwaway cluster"

    /// Whether PostgreSQL tests can run here: a URL is given, or a cluster can be started.
    public static var isAvailable: Bool { configuredURL != nil || binaries != nil }

    static var configuredURL: String? {
        guard let url = ProcessInfo.processInfo.environment[variable], !url.isEmpty else { return nil }
        return url
    }

    /// The folder with `initdb` and `postgres`: `/usr/lib/postgresql/N/bin` (the newest), or `PATH`.
    static let binaries: URL? = {
        let fileManager = FileManager.default
        let root = "/usr/lib/postgresql"
        let versions = ((try? fileManager.contentsOfDirectory(atPath: root)) ?? []).compactMap(Int.init).sorted()
        var folders = versions.reversed().map { URL(fileURLWithPath: "\(root)/\($0)/bin") }
        for path in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
            folders.append(URL(fileURLWithPath: String(path)))
        }
        return folders.first { folder in
            ["initdb", "postgres"].allSatisfy {
                fileManager.isExecutableFile(atPath: folder.appendingPathComponent($0).path)
            }
        }
    }()

    /// The server's admin URL: the configured one, or a cluster started on first use.
    public static func adminURL() async throws -> String {
        if let configuredURL { return configuredURL }
        return try await cluster.value
    }

    private static let cluster = Task { try await startCluster() }

    /// Runs `body` with the URL of a new, empty database, dropped afterwards.
    public static func withDatabase<T>(_ body: (String) async throws -> T) async throws -> T {
        let admin = try await adminURL()
        let name = "nv_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(20).lowercased()
        try await psql(admin, "CREATE DATABASE \(name)")
        let url = try databaseURL(admin, name: name)
        do {
            let result = try await body(url)
            try? await psql(admin, "DROP DATABASE \(name) WITH (FORCE)")
            return result
        } catch {
            try? await psql(admin, "DROP DATABASE \(name) WITH (FORCE)")
            throw error
        }
    }

    /// `admin` with its database replaced by `name`.
    public static func databaseURL(_ admin: String, name: String) throws -> String {
        guard var components = URLComponents(string: admin) else {
            throw ChildProcessError("\(variable) is not a URL: \(admin)")
        }
        components.path = "/" + name
        guard let url = components.string else { throw ChildProcessError("cannot build a URL from \(admin)") }
        return url
    }

    /// Runs one SQL command with `psql` against `url`; throws with psql's output when it fails.
    public static func psql(_ url: String, _ command: String) async throws {
        _ = try await psqlRows(url, command)
    }

    /// Runs one SQL query with `psql` against `url` and returns its rows, each a list of its
    /// columns as text; throws with psql's output when it fails.
    public static func psqlRows(_ url: String, _ query: String) async throws -> [[String]] {
        let psql = binaries?.appendingPathComponent("psql") ?? URL(fileURLWithPath: "/usr/bin/psql")
        let tool =
            FileManager.default.isExecutableFile(atPath: psql.path) ? psql : URL(fileURLWithPath: "/usr/bin/psql")
        let outcome = try await ChildProcess.run(
            tool, arguments: ["-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", query])
        guard outcome.exit == .exited(0) else { throw ChildProcessError("psql -c '\(query)' failed: \(outcome)") }
        return outcome.stdout.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
    }

    // MARK: - A throwaway cluster

    /// initdb in a temporary folder, then `postgres` on a free loopback port as a child of this
    /// process; returns its admin URL once it accepts connections.
    private static func startCluster() async throws -> String {
        guard let binaries else { throw ChildProcessError(unavailableReason) }
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("nv-pg-\(UUID().uuidString)")
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // initdb refuses to run as root: run the server as `postgres` (or `nobody`) then.
        var prefix: [String] = []
        if geteuid() == 0 {
            let user = getpwnam("postgres") != nil ? "postgres" : "nobody"
            guard let entry = getpwnam(user) else { throw ChildProcessError("no unprivileged user to run PostgreSQL") }
            chown(folder.path, entry.pointee.pw_uid, entry.pointee.pw_gid)
            prefix = [
                "--reuid=\(user)", "--regid=\(entry.pointee.pw_gid)", "--clear-groups", "--pdeathsig", "KILL", "--",
            ]
        }
        func command(_ tool: String, _ arguments: [String]) -> (URL, [String]) {
            let path = binaries.appendingPathComponent(tool).path
            if prefix.isEmpty { return (URL(fileURLWithPath: path), arguments) }
            return (URL(fileURLWithPath: "/usr/bin/setpriv"), prefix + [path] + arguments)
        }
        let (initdb, initdbArguments) = command(
            "initdb", ["-D", data.path, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"])
        let initialized = try await ChildProcess.run(initdb, arguments: initdbArguments, timeout: .seconds(120))
        guard initialized.exit == .exited(0) else { throw ChildProcessError("initdb failed: \(initialized)") }
        let port = try freePort()
        let (postgres, postgresArguments) = command(
            "postgres",
            [
                "-D", data.path, "-p", "\(port)", "-k", folder.path, "-c", "listen_addresses=127.0.0.1",
                "-c", "fsync=off", "-c", "max_connections=300", "-c", "shared_buffers=32MB",
            ])
        let server = try ChildProcess(postgres, arguments: postgresArguments)
        serverProcess.withLock { $0 = server }
        let lines = server.standardError.lines
        let ready = try await withTimeout(.seconds(60), "PostgreSQL to accept connections") { () async -> Bool in
            for await line in lines where line.contains("ready to accept connections") { return true }
            return false
        }
        guard ready else {
            throw ChildProcessError("PostgreSQL did not start: \(await server.standardError.text())")
        }
        return "postgres://postgres@127.0.0.1:\(port)/postgres"
    }

    /// Keeps the started server's handle alive for the whole test process.
    private static let serverProcess = Mutex<ChildProcess?>(nil)

    /// A port nothing listens on now (bound and released at once).
    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ChildProcessError("socket failed: errno \(errno)") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw ChildProcessError("bind failed: errno \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard named == 0 else { throw ChildProcessError("getsockname failed: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
