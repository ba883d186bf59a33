import NavigationValues
import NavigationValuesClient
import NavigationValuesWire
import Testing

/// The client's `explain` option: the same resources, each screen with its typed `explanation`.
@Suite struct ExplainTests {
    /// SEMANTICS.md §2 and §3 on two screens: Home's `text` is its own, Detail reads it from Home;
    /// the preference Detail published reached Home through Detail's handler and Home's.
    @Test(arguments: ServerKind.allCases) func explainTypesEachScreensExplanation(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            let (session, created) = try await client.createSessionReturningResource(
                root: ScreenSeed("Home", values: ["text": "hello"]), schema: demoSchema)
            let home = created.screens[0].id
            let detail = try await session.push("Detail").screen.id
            try await session.screen(id: home).setPreferenceHandler(named: "preference", passBack: true)
            try await session.screen(id: detail).setPreferenceHandler(named: "preference", passBack: false)
            try await session.screen(id: detail).updatePreference(named: "preference", value: "chosen")

            let plain = try await session.get()
            #expect(plain.screens.allSatisfy { $0.explanation == nil })
            let explained = try await session.get(explain: true)
            #expect(explained.screens.map(\.id) == plain.screens.map(\.id))
            let onDetail = try #require(explained.screens[1].explanation)
            #expect(onDetail.values["text"] == .screen(home, stack: .main))
            let arrival = try #require(onDetail.preferences["preference"] ?? nil)
            #expect(arrival.publisher == detail && arrival.index == 0)
            #expect(arrival.hops == [PreferenceHopResource(screen: detail, handling: .called, received: "chosen", passed: nil)])
            // Home never received it: Detail stopped it.
            #expect(explained.screens[0].explanation?.preferences.isEmpty == true)

            let screen = try await session.screen(id: detail).get(explain: true)
            #expect(screen.explanation == onDetail)
            #expect(try await session.screen(id: detail).get().explanation == nil)
            let replayed = try await session.replay(explain: true)
            #expect(replayed.screens[1].explanation == onDetail)
            #expect(try await session.replay().screens[1].explanation == nil)
        }
    }
}
