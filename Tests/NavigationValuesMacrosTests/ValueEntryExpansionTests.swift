import Testing

@Suite struct ValueEntryExpansionTests {
    @Test func entryBecomesAccessorsThroughItsKeyAndAKeyCarryingTheDefault() {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry var title: String = ""
            }
            """
        )
        #expect(expansion.diagnostics == [])
        #expect(
            expansion.source == """
                extension ScreenContext {
                    var title: String {
                        get {
                            self[__Key_title.self]
                        }
                        set {
                            self[__Key_title.self] = newValue
                        }
                    }

                    struct __Key_title: NavigationValues.ValueKey {
                        static var defaultValue: String {
                            ""
                        }
                    }
                }
                """
        )
    }
}
