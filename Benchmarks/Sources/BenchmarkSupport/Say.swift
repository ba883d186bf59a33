import Foundation

/// Writes `line` to stdout at once (one write(2), no buffer), so figures show as they are measured
/// and stay in order with the verdicts, also when stdout is a pipe.
public func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
