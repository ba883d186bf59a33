import Testing
import NavigationValues

@Test func placeholder() { #expect(Bool(true)) }
