import Foundation
import Testing

@testable import NavigationValues

/// What a resident screen costs: the representations that keep it small (one word of entries,
/// named JSON values as pairs, the library's behaviours as a case, preference storage only once
/// used), and that each of them reads back exactly what was written, in order, through every
/// change of form.
@Suite struct StorageLayoutTests {
    /// `malloc_usable_size` of an object, nil where the C library has none (looked up: malloc.h
    /// is not in Glibc's module map).
    private static func usableSize(_ object: AnyObject) -> Int? {
        #if canImport(Glibc)
            guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_usable_size") else { return nil }
            typealias Usable = @convention(c) (UnsafeMutableRawPointer?) -> Int
            return unsafeBitCast(symbol, to: Usable.self)(Unmanaged.passUnretained(object).toOpaque())
        #else
            return nil
        #endif
    }

    @Test func aScreenContextFitsAHundredAndTwentyEightByteBlock() throws {
        #expect(MemoryLayout<EntryTable>.size == MemoryLayout<Int>.size)
        let context = ScreenContext(.navigation)
        // 120 usable bytes is glibc's 128-byte chunk; the context was 192 before its storage was
        // packed (a five-word behaviour existential, three dictionaries and a counter inline).
        if let size = Self.usableSize(context) { #expect(size <= 120) }
    }

    @Test func namedEntriesReadBackInOrderThroughEveryForm() {
        var table = EntryTable()
        let names = (0..<12).map { "key\($0)" }
        // Named JSON values only: the compact form.
        for (index, name) in names.prefix(3).enumerated() { table[.name(name)] = JSONValue.integer(Int64(index)) }
        #expect(table.count == 3)
        #expect(table.map(\.key) == names.prefix(3).map { EntryID.name($0) })
        #expect(table[.name("key1")] as? JSONValue == .integer(1))
        table[.name("key1")] = JSONValue.string("changed")
        #expect(table[.name("key1")] as? JSONValue == "changed")
        #expect(table.map(\.key) == names.prefix(3).map { EntryID.name($0) })
        // A typed key: the general form, the named entries first, in their order.
        struct Typed: ValueKey { static let defaultValue = 0 }
        let typed = EntryID.type(ObjectIdentifier(Typed.self))
        table[typed] = 7
        #expect(table.map(\.key) == names.prefix(3).map { EntryID.name($0) } + [typed])
        #expect(table[typed] as? Int == 7)
        #expect(table[.name("key0")] as? JSONValue == .integer(0))
        table[.name("key0")] = nil
        #expect(table.map(\.key) == [.name("key1"), .name("key2"), typed])
        // Past the small limit: a dictionary, every entry kept.
        for name in names.dropFirst(3) { table[.name(name)] = JSONValue.bool(true) }
        #expect(table.count == 2 + 1 + 9)
        #expect(Set(table.keys) == Set(names.dropFirst().map { EntryID.name($0) } + [typed]))
        #expect(table[.name("key11")] as? JSONValue == true)
        #expect(table[typed] as? Int == 7)
    }

    @Test func aLargeTableIsAValue() {
        var table = EntryTable()
        for index in 0..<10 { table[.name("key\(index)")] = JSONValue.integer(Int64(index)) }
        var copy = table
        copy[.name("key0")] = JSONValue.string("changed")
        copy[.name("key1")] = nil
        #expect(table[.name("key0")] as? JSONValue == .integer(0))
        #expect(table[.name("key1")] as? JSONValue == .integer(1))
        #expect(table.count == 10 && copy.count == 9)
        #expect(copy[.name("key0")] as? JSONValue == "changed")
    }

    @Test func aStackMakesItsScreensFromWhatItKeeps() {
        let stack = ScreenStack<String>(ids: .incrementing(prefix: "s"))
        #expect(stack.firstEntry == nil && stack.lastEntry == nil && stack.entries.isEmpty)
        let root = stack.push("Home")
        let detail = stack.push("Detail", id: ScreenID("detail"))
        stack.push("More")
        let entries = stack.entries
        #expect(entries.map(\.id) == [ScreenID("s0"), ScreenID("detail"), ScreenID("s1")])
        #expect(entries.map(\.element) == ["Home", "Detail", "More"])
        #expect(entries[0].context === root && entries[1].context === detail)
        #expect(stack.ids == entries.map(\.id))
        #expect(stack.path.map(\.element) == entries.map(\.element))
        #expect(stack.firstEntry?.id == entries.first?.id && stack.lastEntry?.id == entries.last?.id)
        #expect(stack.entry(at: 1).element == "Detail" && stack.screen(id: ScreenID("detail"))?.context === detail)
        stack.pop()
        #expect(stack.lastEntry?.id == ScreenID("detail") && stack.entries.count == 2)
    }

    @Test func aNamedEntryHoldingAnythingButJSONTakesTheGeneralForm() {
        var table = EntryTable()
        table[.name("a")] = JSONValue.null
        table[.name("b")] = 3  // not a JSONValue: kept as given
        #expect(table[.name("a")] as? JSONValue == .null)
        #expect(table[.name("b")] as? Int == 3)
        #expect(table.map(\.key) == [.name("a"), .name("b")])
        table[.name("missing")] = nil
        #expect(table.count == 2)
    }

    @Test func behavioursReadBackAsGiven() throws {
        #expect(ScreenContext(.navigation).behavior is NavigationBehavior)
        #expect(ScreenContext(.navigationStack).behavior is NavigationStackBehavior)
        #expect(ScreenContext(.screen).behavior is ScreenBehavior)
        #expect(ScreenContext(.tabView).behavior is TabViewBehavior)
        let sheet = ScreenContext(.sheet)
        #expect((sheet.behavior as? PresentationBehavior)?.style == .sheet)
        #expect(sheet.isPresentation && sheet.role == .navigationStack)
        let cover = ScreenContext(.fullScreenCover)
        #expect((cover.behavior as? PresentationBehavior)?.style == .fullScreenCover)
        #expect(cover.isPresentation)
        #expect(!ScreenContext(.navigationStack).isPresentation)
        // Any other behaviour is kept as given: a class keeps its identity.
        final class Pager: ScreenContextBehavior {
            var role: ScreenContextRole { .navigationStack }
        }
        let pager = Pager()
        let paged = ScreenContext(pager)
        #expect((paged.behavior as? Pager) === pager)
        #expect(paged.role == .navigationStack && !paged.isPresentation)
    }

    @Test func preferenceStorageIsMadeOnFirstUseAndClearedByCleanup() {
        let stack = ScreenStack()
        let root = stack.push()
        let top = stack.push()
        #expect(root.handlers.isEmpty && root.received.isEmpty && root.handlerGeneration == 0)
        root.setPreferenceHandler(named: "choice", passBack: false)
        #expect(root.handlerGeneration == 1)
        _ = top.updatePreference(named: "choice", value: "x")
        #expect(root.receivedPreference(named: "choice") == "x")
        #expect(root.preferenceArrival(named: "choice") != nil)
        root.cleanup()
        #expect(root.handlers.isEmpty && root.arrivals.isEmpty && root.handlerGeneration == 2)
        #expect(root.receivedPreference(named: "choice") == nil)
    }
}
