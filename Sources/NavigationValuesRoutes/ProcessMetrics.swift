#if os(Linux)
    import Glibc
#endif

/// The process's own figures under Prometheus's standard names (`process_…`), as its client
/// libraries read them on Linux: from `/proc/self/stat`, `/proc/self/fd`, `/proc/self/limits` and
/// `/proc/stat`. Elsewhere (no `/proc`) there are none, and `/metrics` leaves them out.
///
/// ```swift
/// ProcessMetrics.read()?.residentMemoryBytes   // 41_287_680
/// ```
struct ProcessMetrics: Sendable, Equatable {
    /// Resident set size: memory in RAM now.
    var residentMemoryBytes: Int
    /// Virtual memory size.
    var virtualMemoryBytes: Int
    /// CPU time in user and kernel mode since the process started.
    var cpuSeconds: Double
    /// File descriptors open now (sockets included).
    var openFileDescriptors: Int
    /// The soft limit on open file descriptors (`ulimit -n`); nil when unlimited.
    var maxFileDescriptors: Int?
    /// When the process started, in seconds since the Unix epoch.
    var startTimeSeconds: Double

    /// The figures as they are now, or nil where `/proc` cannot be read.
    static func read() -> ProcessMetrics? {
        #if os(Linux)
            guard let stat = ProcFile.read("/proc/self/stat"), let fields = statFields(stat),
                let bootTime = ProcFile.read("/proc/stat").flatMap(bootTimeSeconds),
                // Less the descriptor that lists the folder, open while it does.
                let openFileDescriptors = ProcFile.entryCount("/proc/self/fd").map({ $0 - 1 })
            else { return nil }
            let ticksPerSecond = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
            let pageSize = max(1, sysconf(Int32(_SC_PAGESIZE)))
            return ProcessMetrics(
                residentMemoryBytes: fields.residentPages * pageSize, virtualMemoryBytes: fields.virtualBytes,
                cpuSeconds: Double(fields.userTicks + fields.systemTicks) / ticksPerSecond,
                openFileDescriptors: openFileDescriptors,
                maxFileDescriptors: ProcFile.read("/proc/self/limits").flatMap(maxOpenFiles),
                startTimeSeconds: bootTime + Double(fields.startTicks) / ticksPerSecond)
        #else
            return nil
        #endif
    }

    /// The fields of `/proc/PID/stat` read here (proc(5)): after the command name, which is in
    /// parentheses and may hold spaces or parentheses itself, so the fields are counted from the
    /// last `)`.
    struct StatFields: Equatable {
        var userTicks: Int
        var systemTicks: Int
        var startTicks: Int
        var virtualBytes: Int
        var residentPages: Int
    }

    static func statFields(_ text: String) -> StatFields? {
        guard let close = text.lastIndex(of: ")") else { return nil }
        // Field 3 (state) comes first here, so field n is at n - 3.
        let fields = text[text.index(after: close)...].split(separator: " ", omittingEmptySubsequences: true)
        func field(_ number: Int) -> Int? {
            number - 3 < fields.count ? Int(fields[number - 3].trimmingSuffix("\n")) : nil
        }
        guard let user = field(14), let system = field(15), let start = field(22), let virtual = field(23),
            let resident = field(24)
        else { return nil }
        return StatFields(
            userTicks: user, systemTicks: system, startTicks: start, virtualBytes: virtual, residentPages: resident)
    }

    /// `btime` of `/proc/stat`: when the machine booted, in seconds since the epoch.
    static func bootTimeSeconds(_ text: String) -> Double? {
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count))
        }
        return nil
    }

    /// The soft limit of `Max open files` in `/proc/self/limits` (nil for `unlimited`).
    static func maxOpenFiles(_ text: String) -> Int? {
        for line in text.split(separator: "\n") where line.hasPrefix("Max open files") {
            let columns = line.dropFirst("Max open files".count).split(separator: " ")
            return columns.first.flatMap { Int($0) }
        }
        return nil
    }
}

extension Substring {
    fileprivate func trimmingSuffix(_ suffix: Character) -> Substring { last == suffix ? dropLast() : self }
}

#if os(Linux)
    /// Reads `/proc` files, which report a size of 0, to their end.
    enum ProcFile {
        static func read(_ path: String) -> String? {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var bytes: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while bytes.count < 1 << 20 {
                let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                bytes += chunk[0..<count]
            }
            return String(decoding: bytes, as: UTF8.self)
        }

        /// Entries of a folder, `.` and `..` left out.
        ///
        /// The name is read where it lies, never by copying the entry: readdir(3) returns records
        /// only as long as their names need, so `entry.pointee` (a whole `dirent`, 256 bytes of
        /// name) can read past the end of the directory's buffer and fault when that is the end
        /// of a mapping.
        static func entryCount(_ path: String) -> Int? {
            guard let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) else { return nil }
            guard let folder = opendir(path) else { return nil }
            defer { closedir(folder) }
            var count = 0
            while let entry = readdir(folder) {
                let name = UnsafeRawPointer(entry).advanced(by: nameOffset).assumingMemoryBound(to: UInt8.self)
                // `.` or `..`; each byte is read only when the one before was not the name's end.
                let isDot = name[0] == 0x2E && (name[1] == 0 || (name[1] == 0x2E && name[2] == 0))
                if !isDot { count += 1 }
            }
            return count
        }
    }
#endif
