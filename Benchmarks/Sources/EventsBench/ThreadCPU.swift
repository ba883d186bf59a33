import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// CPU time of this process's threads by name, from `/proc/self/task/*/schedstat` (nanoseconds
/// on a CPU, whatever else the machine runs): what a phase cost each kind of thread, which
/// wall-clock latencies on a shared machine cannot show.
struct ThreadCPU {
    /// Nanoseconds on a CPU by thread name (threads of one name added up).
    var byName: [String: UInt64] = [:]

    static func now() -> ThreadCPU {
        var figures = ThreadCPU()
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            guard let comm = try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8),
                let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8),
                let first = stat.split(separator: " ").first, let nanoseconds = UInt64(first)
            else { continue }
            let name = comm.trimmingCharacters(in: .whitespacesAndNewlines)
            // Numbered threads of one pool count as one kind: `http-loop-0` and `http-loop-1`.
            let kind = name.replacingOccurrences(of: #"-\d+$"#, with: "", options: .regularExpression)
            figures.byName[kind, default: 0] += nanoseconds
        }
        return figures
    }

    /// What each kind of thread ran since `earlier`, in nanoseconds.
    func since(_ earlier: ThreadCPU) -> [String: UInt64] {
        byName.mapValues { $0 }.reduce(into: [:]) { result, entry in
            let before = earlier.byName[entry.key] ?? 0
            if entry.value > before { result[entry.key] = entry.value - before }
        }
    }
}
