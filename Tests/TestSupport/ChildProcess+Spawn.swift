import CSpawn
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

// How ChildProcess starts, watches and reaps a child: posix_spawn(3) from one long-lived thread,
// and one thread per child that waits for its end. Foundation's Process is not used: its child
// setup in swift-corelibs-foundation 6.3 can crash the whole test process (upstream PR 5472).

// MARK: - Spawning

/// Everything posix_spawn needs to start one child, as values, so it can cross to the spawning thread.
struct SpawnRequest: Sendable {
    /// The file to exec (no `PATH` search).
    var path: String
    /// `argv`, `argv[0]` included.
    var arguments: [String]
    /// `NAME=value` entries; nil: ours (`environ`).
    var environment: [String]?
    /// The child's working directory; nil: ours.
    var directory: String?
    /// The write ends the child gets as its stdout and stderr.
    var standardOutput: Int32
    var standardError: Int32

    /// Starts the child and returns its process id.
    ///
    /// In the child, in order: change to `directory`, stdin from /dev/null, the two pipes onto 1 and
    /// 2, then every descriptor from 3 up closed (`addclosefrom_np`), so none of the test process's
    /// many descriptors (other suites' sockets) reaches it, CLOEXEC or not. Where glibc lacks that
    /// call (before 2.34) only descriptors opened with CLOEXEC stay out, which all of ours are.
    /// The signal mask is emptied and every catchable signal set to its default action, so a child
    /// inherits neither a mask blocked on the spawning thread nor a signal this process ignores.
    ///
    /// - Throws: ``ChildProcessError`` naming the path (and the directory) with strerror(3).
    func spawn() throws -> pid_t {
        let actions = UnsafeMutablePointer<posix_spawn_file_actions_t>.allocate(capacity: 1)
        defer { actions.deallocate() }
        try check(posix_spawn_file_actions_init(actions), "posix_spawn_file_actions_init")
        defer { posix_spawn_file_actions_destroy(actions) }
        if let directory {
            let result = cspawn_add_chdir(actions, directory)
            guard result != ENOSYS else {
                throw ChildProcessError("cannot run \(path) in \(directory): this glibc has no addchdir_np (2.29)")
            }
            try check(result, "posix_spawn_file_actions_addchdir_np")
        }
        try check(posix_spawn_file_actions_addopen(actions, 0, "/dev/null", O_RDONLY, 0), "addopen /dev/null")
        try check(posix_spawn_file_actions_adddup2(actions, standardOutput, 1), "adddup2 stdout")
        try check(posix_spawn_file_actions_adddup2(actions, standardError, 2), "adddup2 stderr")
        let closeFrom = cspawn_add_close_from(actions, 3)
        if closeFrom != ENOSYS { try check(closeFrom, "posix_spawn_file_actions_addclosefrom_np") }

        let attributes = UnsafeMutablePointer<posix_spawnattr_t>.allocate(capacity: 1)
        defer { attributes.deallocate() }
        try check(posix_spawnattr_init(attributes), "posix_spawnattr_init")
        defer { posix_spawnattr_destroy(attributes) }
        var signals = sigset_t()
        sigemptyset(&signals)
        try check(posix_spawnattr_setsigmask(attributes, &signals), "posix_spawnattr_setsigmask")
        sigfillset(&signals)
        sigdelset(&signals, SIGKILL)  // neither can be caught, so neither has an action to reset
        sigdelset(&signals, SIGSTOP)
        try check(posix_spawnattr_setsigdefault(attributes, &signals), "posix_spawnattr_setsigdefault")
        try check(
            posix_spawnattr_setflags(attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)),
            "posix_spawnattr_setflags")

        return try withCStrings(arguments, "argument") { argv in
            let spawn = { (envp: UnsafePointer<UnsafeMutablePointer<CChar>?>?) throws -> pid_t in
                var processIdentifier: pid_t = 0
                let result = posix_spawn(&processIdentifier, path, actions, attributes, argv, envp)
                guard result == 0 else {
                    let place = directory.map { " in \($0)" } ?? ""
                    throw ChildProcessError("cannot run \(path)\(place): \(errorDescription(result))")
                }
                return processIdentifier
            }
            guard let environment else { return try spawn(UnsafePointer(environ)) }
            return try withCStrings(environment, "environment entry") { try spawn($0) }
        }
    }

    private func check(_ result: Int32, _ call: String) throws {
        guard result == 0 else { throw ChildProcessError("\(call) for \(path): \(errorDescription(result))") }
    }
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings (an argv or envp), freed
/// afterwards. A string holding a NUL byte would be cut short silently, so it throws instead.
private func withCStrings<T>(
    _ strings: [String], _ what: String, _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) throws -> T
) throws -> T {
    if let bad = strings.first(where: { $0.utf8.contains(0) }) {
        throw ChildProcessError("the \(what) \(bad.debugDescription) holds a NUL byte")
    }
    var pointers = strings.map { strdup($0) }
    defer { for pointer in pointers { free(pointer) } }
    guard !pointers.contains(nil) else { throw ChildProcessError("strdup: \(errorDescription(ENOMEM))") }
    pointers.append(nil)
    return try pointers.withUnsafeBufferPointer { buffer in
        guard let base = buffer.baseAddress else { throw ChildProcessError("no \(what)s") }
        return try body(base)
    }
}

/// strerror(3) with the number: `No such file or directory (errno 2)`.
func errorDescription(_ code: Int32) -> String {
    "\(String(cString: strerror(code))) (errno \(code))"
}

/// Throws ``ChildProcessError`` unless `path` is a file this process may execute, and `directory`
/// (when given) a folder: said before spawning, since `setpriv` (the file actually spawned) would
/// otherwise report a missing executable only as its own exit status.
func checkRunnable(_ path: String, in directory: String?) throws {
    var info = stat()
    if stat(path, &info) != 0 || access(path, X_OK) != 0 {
        throw ChildProcessError("cannot run \(path): \(errorDescription(errno))")
    }
    if info.st_mode & S_IFMT == S_IFDIR { throw ChildProcessError("cannot run \(path): \(errorDescription(EACCES))") }
    guard let directory else { return }
    if stat(directory, &info) != 0 {
        throw ChildProcessError("cannot run \(path) in \(directory): \(errorDescription(errno))")
    }
    if info.st_mode & S_IFMT != S_IFDIR {
        throw ChildProcessError("cannot run \(path) in \(directory): \(errorDescription(ENOTDIR))")
    }
}

/// The two ends of a pipe made close-on-exec from the start (pipe2(2), O_CLOEXEC).
struct PipeEnds {
    let read: Int32
    let write: Int32

    init() throws {
        var ends: [Int32] = [-1, -1]
        guard pipe2(&ends, O_CLOEXEC) == 0 else { throw ChildProcessError("pipe2: \(errorDescription(errno))") }
        read = ends[0]
        write = ends[1]
    }

    func close() {
        _ = Glibc.close(read)
        _ = Glibc.close(write)
    }
}

/// Starts every child from one thread that lives as long as the test process. The parent-death
/// signal fires when the thread that started a child ends (prctl(2), PR_SET_PDEATHSIG), and the
/// cooperative pool's threads may end while their children still run; this one never does.
final class Spawner: Sendable {
    /// The one spawning thread, or why it could not start.
    private static let shared = Result { try Spawner() }
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let wakeUp = DispatchSemaphore(value: 0)

    private init() throws {
        try startThread(named: "ChildSpawner") { [self] in
            while true {
                wakeUp.wait()
                let job = jobs.withLock { $0.isEmpty ? nil : $0.removeFirst() }
                job?()
            }
        }
    }

    /// Runs `request` on the spawning thread and returns the child's process id.
    static func spawn(_ request: SpawnRequest) throws -> pid_t {
        try shared.get().run(request)
    }

    private func run(_ request: SpawnRequest) throws -> pid_t {
        final class Outcome: Sendable {
            let result = Mutex<Result<pid_t, any Error>?>(nil)
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        jobs.withLock {
            $0.append {
                let result = Result { try request.spawn() }
                outcome.result.withLock { $0 = result }
                outcome.done.signal()
            }
        }
        wakeUp.signal()
        outcome.done.wait()
        guard let result = outcome.result.withLock({ $0 }) else {
            throw ChildProcessError("the spawning thread finished \(request.path) without a result")
        }
        return try result.get()
    }
}

// MARK: - Threads

/// Runs `body` on a detached POSIX thread of its own, named `name` (at most 15 bytes), with a
/// 512 KiB stack: a child's readers and reaper only loop over one system call.
func startThread(named name: String, _ body: @escaping @Sendable () -> Void) throws {
    final class Start {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    pthread_attr_setstacksize(&attributes, 512 * 1024)
    let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
        &thread, &attributes,
        { context in
            guard let context else { return nil }
            let start = Unmanaged<Start>.fromOpaque(context).takeRetainedValue()
            _ = pthread_setname_np(pthread_self(), start.name)
            start.body()
            return nil
        }, start)
    guard result == 0 else {
        Unmanaged<Start>.fromOpaque(start).release()
        throw ChildProcessError("pthread_create (\(name)): \(errorDescription(result))")
    }
}

// MARK: - Ending

extension ChildProcess {
    /// How a child ended, once it has, and who waits for that; the only sender of signals to it, so
    /// that none reaches another process that got its pid after it was reaped.
    final class Ending: Sendable {
        let processIdentifier: pid_t
        private let state = Mutex<(exit: Exit?, waiters: [CheckedContinuation<Exit, Never>])>((nil, []))

        init(processIdentifier: pid_t) { self.processIdentifier = processIdentifier }

        /// How the child ended; nil while it runs (or is a zombie not yet reaped).
        var exit: Exit? { state.withLock { $0.exit } }

        /// Sends `signal` while the child is not yet reaped. Under the lock that ``reap()`` takes
        /// to reap: until then the pid is the child's (running, or a zombie), never a newcomer's.
        func send(_ signal: Int32) {
            state.withLock { state in
                if state.exit == nil { _ = Glibc.kill(processIdentifier, signal) }
            }
        }

        /// Blocks until the child ends, reaps it and records how it ended; on its own thread, once.
        ///
        /// waitid(2) with WNOWAIT waits first and leaves the child a zombie (its pid still taken);
        /// waitpid(2), which returns at once then, reaps it under the lock ``send(_:)`` takes, so
        /// the exit is recorded in the same step as the pid is freed.
        func reap() {
            var info = siginfo_t()
            var isZombie = false
            while !isZombie {
                isZombie = waitid(P_PID, id_t(processIdentifier), &info, WEXITED | WNOWAIT) == 0
                if !isZombie, errno != EINTR { break }
            }
            let (exit, waiters) = state.withLock { state in
                var status: Int32 = 0
                var reaped: pid_t = -1
                if isZombie {
                    repeat { reaped = waitpid(processIdentifier, &status, 0) } while reaped < 0 && errno == EINTR
                }
                // ECHILD: someone else reaped it (SIGCHLD ignored, or a waitpid(-1) elsewhere) and
                // its status is lost; -1 is no exit status a process can have (0...255).
                let exit = reaped == processIdentifier ? WaitStatus(rawValue: status).exit : .exited(-1)
                state.exit = exit
                defer { state.waiters = [] }
                return (exit, state.waiters)
            }
            for waiter in waiters { waiter.resume(returning: exit) }
        }

        /// Waits until ``reap()`` has recorded the end.
        func wait() async -> Exit {
            await withCheckedContinuation { continuation in
                let exit = state.withLock { state -> Exit? in
                    if state.exit == nil { state.waiters.append(continuation) }
                    return state.exit
                }
                if let exit { continuation.resume(returning: exit) }
            }
        }
    }
}

/// A status from waitpid(2), decoded as <sys/wait.h>'s macros do (Swift imports none of them):
/// the low 7 bits hold the signal that killed the child (0: it exited; 0x7f: it stopped), bit 7
/// whether it dumped core, and bits 8-15 its exit status.
struct WaitStatus: Equatable {
    var rawValue: Int32

    /// WTERMSIG.
    var terminationSignal: Int32 { rawValue & 0x7f }
    /// WEXITSTATUS.
    var exitStatus: Int32 { (rawValue >> 8) & 0xff }
    /// WIFEXITED.
    var hasExited: Bool { terminationSignal == 0 }

    /// How the child ended. Without WUNTRACED or WCONTINUED, waitpid reports only children that
    /// exited or were killed, so a status that is not an exit is a signal.
    var exit: ChildProcess.Exit { hasExited ? .exited(exitStatus) : .signalled(terminationSignal) }
}
