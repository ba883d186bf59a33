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

        /// Hundreds of descriptors open at once: `/proc/self/fd` lists them in several full
        /// buffers, each of which ends with a record shorter than a whole `dirent`.
        @Test func theOpenDescriptorsAreCountedWhenManyAreOpen() throws {
            let before = try #require(ProcFile.entryCount("/proc/self/fd"))
            var descriptors: [Int32] = []
            defer { for descriptor in descriptors { close(descriptor) } }
            for _ in 0..<800 {
                let descriptor = open("/dev/null", O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { break }
                descriptors.append(descriptor)
            }
            try #require(descriptors.count > 600, "could not open descriptors: errno \(errno)")
            let during = try #require(ProcFile.entryCount("/proc/self/fd"))
            // Other suites open and close descriptors meanwhile: within a margin of what was added.
            #expect(abs(during - before - descriptors.count) < 500)
        }
    #endif
}
