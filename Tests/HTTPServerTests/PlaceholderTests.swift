import Testing
import HTTPServer

@Test func placeholder() { #expect(Bool(true)) }
