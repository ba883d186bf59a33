import Foundation
import Testing

@testable import NavigationValuesRoutes

/// How `/metrics` counts a folder's entries (the open descriptors in `/proc/self/fd`): readdir(3)
/// records are read where they lie, whatever their names' lengths.
@Suite struct ProcFileTests {
    #if os(Linux)
        /// Names of every length from 1 to 255 bytes (the longest a name can be), and names that
        /// begin as `.` and `..` do without being them, are each counted once; `.` and `..` are not.
        @Test func everyEntryIsCountedAndTheDotsAreNot() throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("proc-file-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            var names = (1...255).map { String(repeating: "n", count: $0) }
            names += [".x", "..x", "...", ".hidden"]
            for name in names {
                #expect(FileManager.default.createFile(atPath: folder.appendingPathComponent(name).path, contents: nil))
            }
            #expect(ProcFile.entryCount(folder.path) == names.count)
            #expect(ProcFile.entryCount(folder.appendingPathComponent("missing").path) == nil)
        }

        /// Hundreds of descriptors open at once: `/proc/PID/fd` lists them in several full
        /// buffers, each of which ends with a record shorter than a whole `dirent`. They are held
        /// by a child shell that waits on its input, so nothing else opens or closes any while both
        /// counts are taken (this process's own descriptors change as other suites run).
        @Test func theOpenDescriptorsAreCountedWhenManyAreOpen() throws {
            let shell = Process()
            shell.executableURL = URL(fileURLWithPath: "/bin/bash")
            shell.arguments = ["-c", "for i in $(seq 10 809); do eval \"exec $i</dev/null\"; done; echo ready; read _"]
            let input = Pipe()
            let output = Pipe()
            shell.standardInput = input
            shell.standardOutput = output
            try shell.run()
            defer {
                try? input.fileHandleForWriting.close()
                shell.waitUntilExit()
            }
            let ready = output.fileHandleForReading.availableData
            try #require(String(decoding: ready, as: UTF8.self) == "ready\n")
            let folder = "/proc/\(shell.processIdentifier)/fd"
            let counted = try #require(ProcFile.entryCount(folder))
            let listed = try FileManager.default.contentsOfDirectory(atPath: folder).count
            #expect(counted == listed)
            #expect(counted >= 800)
        }
    #endif
}
