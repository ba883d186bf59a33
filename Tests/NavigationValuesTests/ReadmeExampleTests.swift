import Foundation
import NavigationValues
import Testing

// The README's usage example, verbatim between the markers; `readmeShowsThisExample` keeps the two
// the same.
// README-EXAMPLE-BEGIN
struct Title: ValueKey { static let defaultValue = "" }
struct Chosen: PreferenceKey { static let defaultValue = "" }

func readmeExample() -> (String, String, String) {
    let stack = ScreenStack()
    let home = stack.push { $0[Title.self] = "Home" }
    let detail = stack.push()
    let picker = stack.push()

    // Forward: later screens read what earlier ones wrote, and may override it.
    detail[Title.self] = "Detail"

    // Backward: the picker publishes; Detail keeps it and passes it on; Home keeps it.
    detail.onPreferenceChange(Chosen.self) { value, passBack in passBack(value) }
    home.onPreferenceChange(Chosen.self) { _, _ in }
    picker.updatePreference(Chosen.self, value: "blue")

    stack.pop()  // the picker, cleaned up
    return (picker[Title.self], detail.preference(Chosen.self), home.preference(Chosen.self))
}
// README-EXAMPLE-END

@Suite struct ReadmeExampleTests {
    @Test func exampleRunsAsTheReadmeSays() {
        let (pickerTitle, detailChosen, homeChosen) = readmeExample()
        #expect(pickerTitle == "")  // popped: its context was cleaned up and unlinked
        #expect(detailChosen == "blue")
        #expect(homeChosen == "blue")
    }

    @Test func readmeShowsThisExample() throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let begin = try #require(source.range(of: "// README-EXAMPLE-BEGIN\n"))
        let end = try #require(source.range(of: "// README-EXAMPLE-END"))
        let example = String(source[begin.upperBound..<end.lowerBound])
        #expect(readme.contains(example), "README.md must contain the example of ReadmeExampleTests.swift verbatim")
    }
}
