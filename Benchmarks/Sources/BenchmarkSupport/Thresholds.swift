import Foundation
import NavigationValues
import Synchronization

/// A benchmark's thresholds, kept in the repository (`Benchmarks/Thresholds/NAME.json`, as
/// swift-nio keeps its own), and the verdicts on the figures it measured. A key that starts with
/// `min` is a floor, one with `max` a ceiling; `benchmark` says what the file is for.
///
/// ```swift
/// let thresholds = try Thresholds.load("store")
/// thresholds.check("minReplayEventsPerSecond", replayRate, "replay", unit: "events/s")
/// thresholds.exitWithVerdict()   // exit 0 when every figure met its threshold, else 1
/// ```
public final class Thresholds: Sendable {
    /// The file's name without `.json`.
    public let name: String
    private let limits: [String: Double]
    /// The verdicts so far: how many figures were checked, and those that missed.
    private let verdicts = Mutex<(checked: Int, missed: [String])>((0, []))

    private init(name: String, limits: [String: Double]) {
        self.name = name
        self.limits = limits
    }

    /// The folder of threshold files: `Benchmarks/Thresholds`, found from this file's path.
    public static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Thresholds")

    /// Reads `Benchmarks/Thresholds/NAME.json`.
    public static func load(_ name: String) throws -> Thresholds {
        let url = folder.appendingPathComponent("\(name).json")
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw BenchError("no thresholds file at \(url.path)")
        }
        guard case .object(let members) = try JSONValue(parsing: [UInt8](data)) else {
            throw BenchError("\(url.path) is not a JSON object")
        }
        var limits: [String: Double] = [:]
        for (key, value) in members where key.hasPrefix("min") || key.hasPrefix("max") {
            switch value {
            case .integer(let number): limits[key] = Double(number)
            case .number(let number): limits[key] = number
            default: throw BenchError("\(url.path): \(key) is not a number")
            }
        }
        return Thresholds(name: name, limits: limits)
    }

    /// Compares `value` with the threshold `key` and prints the verdict, as
    /// `label 1234 events/s (goal >= 1000): met`; returns whether it was met.
    @discardableResult
    public func check(_ key: String, _ value: Double, _ label: String, unit: String, decimals: Int = 1) -> Bool {
        guard let limit = limits[key] else {
            verdicts.withLock { $0.missed.append("\(key) (no such threshold in \(name).json)") }
            say("\(label): no threshold \(key) in \(name).json: NOT MET")
            return false
        }
        let isFloor = key.hasPrefix("min")
        let isMet = isFloor ? value >= limit : value <= limit
        let shown = String(format: "%.\(decimals)f", value)
        let goal = "\(isFloor ? ">=" : "<=") \(Self.trimmed(limit))"
        let figure = unit.isEmpty ? shown : "\(shown) \(unit)"
        say("\(label) \(figure) (goal \(goal)): \(isMet ? "met" : "NOT MET")")
        Self.record(key: key, value: value, limit: limit, isMet: isMet, in: name)
        verdicts.withLock { verdicts in
            verdicts.checked += 1
            if !isMet { verdicts.missed.append("\(key): \(figure), goal \(goal)") }
        }
        return isMet
    }

    /// Prints how many figures met their thresholds and exits: 0 when all did, 1 otherwise.
    public func exitWithVerdict() -> Never {
        let (checked, missed) = verdicts.withLock { $0 }
        if missed.isEmpty {
            say("thresholds (\(name).json): all \(checked) met")
            exit(0)
        }
        say("thresholds (\(name).json): NOT MET: \(missed.joined(separator: "; "))")
        exit(1)
    }

    /// Appends `NAME.KEY VALUE LIMIT met|NOT-MET` to the file that `NAVIGATION_VALUES_BENCH_FIGURES`
    /// names, when it is set: how `scripts/bench-table.sh` reads the benchmarks' figures into its
    /// table without parsing what they print for people.
    private static func record(key: String, value: Double, limit: Double, isMet: Bool, in name: String) {
        guard let path = ProcessInfo.processInfo.environment["NAVIGATION_VALUES_BENCH_FIGURES"], !path.isEmpty else {
            return
        }
        let line = "\(name).\(key) \(value) \(trimmed(limit)) \(isMet ? "met" : "NOT-MET")\n"
        if !FileManager.default.fileExists(atPath: path) {
            _ = FileManager.default.createFile(atPath: path, contents: nil)
        }
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data(line.utf8))
    }

    private static func trimmed(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}
