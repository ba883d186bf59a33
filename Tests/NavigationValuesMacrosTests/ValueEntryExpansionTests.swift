import Testing

/// `@ValueEntry` expanded by the macro type the plugin serves, compared as whole source text.
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

    @Test(arguments: [".observationIgnored", "ValueEntryOption.observationIgnored"])
    func observationIgnoredOptionMarksTheKey(option: String) {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry(\(option)) var draft: [String] = ["a"]
            }
            """
        )
        #expect(expansion.diagnostics == [])
        #expect(
            expansion.source == """
                extension ScreenContext {
                    var draft: [String] {
                        get {
                            self[__Key_draft.self]
                        }
                        set {
                            self[__Key_draft.self] = newValue
                        }
                    }

                    struct __Key_draft: NavigationValues.ValueKey {
                        static var defaultValue: [String] {
                            ["a"]
                        }
                        static var isObservationIgnored: Bool {
                            true
                        }
                    }
                }
                """
        )
    }

    @Test func publicEntryGetsAPublicKeyWithPublicRequirements() {
        let expansion = MacroExpansion(
            """
            extension NavigationValues.ScreenContext {
                @ValueEntry(.observationIgnored) public var counter: Int = 0
            }
            """
        )
        #expect(expansion.diagnostics == [])
        #expect(
            expansion.source == """
                extension NavigationValues.ScreenContext {
                    public var counter: Int {
                        get {
                            self[__Key_counter.self]
                        }
                        set {
                            self[__Key_counter.self] = newValue
                        }
                    }

                    public struct __Key_counter: NavigationValues.ValueKey {
                        public static var defaultValue: Int {
                            0
                        }
                        public static var isObservationIgnored: Bool {
                            true
                        }
                    }
                }
                """
        )
    }

    @Test func privateEntryGetsAPrivateKeyAndASetterOnlyLimitLeavesTheKeyAlone() {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry private var secret: Int = 1
                @ValueEntry private(set) var limited: Int = 2
            }
            """
        )
        #expect(expansion.diagnostics == [])
        #expect(expansion.source.contains("    private struct __Key_secret: NavigationValues.ValueKey {\n"))
        #expect(expansion.source.contains("        static var defaultValue: Int {\n            1\n"))
        #expect(expansion.source.contains("\n    struct __Key_limited: NavigationValues.ValueKey {\n"))
    }

    @Test func optionalEntryWithoutAnInitialValueDefaultsToNil() {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry var selection: Int?
            }
            """
        )
        #expect(expansion.diagnostics == [])
        #expect(expansion.source.contains("static var defaultValue: Int? {\n            nil\n        }"))
    }

    @Test func escapedNameGivesTheKeyTheUnescapedName() {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry var `default`: Bool = true
            }
            """
        )
        #expect(expansion.diagnostics == [])
        #expect(expansion.source.contains("get {\n            self[__Key_default.self]\n        }"))
        #expect(expansion.source.contains("struct __Key_default: NavigationValues.ValueKey {"))
    }

    @Test func defaultExpressionMovesIntoTheKeyUnchanged() {
        let expansion = MacroExpansion(
            """
            extension ScreenContext {
                @ValueEntry var limits: [String: Int] = Dictionary(uniqueKeysWithValues: [("a", 1)])
            }
            """
        )
        #expect(expansion.diagnostics == [])
        #expect(
            expansion.source.contains(
                """
                    static var defaultValue: [String: Int] {
                            Dictionary(uniqueKeysWithValues: [("a", 1)])
                        }
                """
            )
        )
    }
}
