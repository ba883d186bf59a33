import Foundation
import NavigationValues
import Testing

// The usage examples of docs/Core.md, verbatim between the markers; `readmeShowsThisExample` keeps the two
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

// README-STACK-EXAMPLE-BEGIN
func readmeStackExample() -> [ScreenID] {
    let stack = ScreenStack<String>(ids: .incrementing(prefix: "s"))
    stack.push("Inbox")  // id "s0"
    stack.push("Message", id: ScreenID("m42"))
    stack[id: ScreenID("s0")]?[Title.self] = "Inbox"
    return stack.pop(to: ScreenID("s0"))  // ["m42"]
}
// README-STACK-EXAMPLE-END

@Suite struct ReadmeExampleTests {
    @Test func exampleRunsAsTheReadmeSays() {
        let (pickerTitle, detailChosen, homeChosen) = readmeExample()
        #expect(pickerTitle == "")  // popped: its context was cleaned up and unlinked
        #expect(detailChosen == "blue")
        #expect(homeChosen == "blue")
    }

    @Test func theStackExampleRunsAsTheReadmeSays() {
        #expect(readmeStackExample() == [ScreenID("m42")])
    }

    @Test(arguments: ["README-EXAMPLE", "README-STACK-EXAMPLE"])
    func readmeShowsThisExample(marker: String) throws {
        let testFile = URL(fileURLWithPath: #filePath)
        let root = testFile.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/Core.md"), encoding: .utf8)
        let source = try String(contentsOf: testFile, encoding: .utf8)
        let begin = try #require(source.range(of: "// \(marker)-BEGIN\n"))
        let end = try #require(source.range(of: "// \(marker)-END"))
        let example = String(source[begin.upperBound..<end.lowerBound])
        #expect(page.contains(example), "docs/Core.md must contain \(marker) of ReadmeExampleTests.swift verbatim")
    }
}
