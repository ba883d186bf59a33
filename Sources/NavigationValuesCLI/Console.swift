import Foundation

/// Where the CLI writes: the only code of the project that prints (the rest logs or returns).
enum Console {
    /// Writes `text` and a newline to stdout at once (FileHandle is unbuffered).
    static func out(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Writes `text` and a newline to stderr at once.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
