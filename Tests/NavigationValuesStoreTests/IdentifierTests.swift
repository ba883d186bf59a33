import Testing
import NavigationValuesStore

@Test func sessionIDsOrderByRawValue() {
    #expect(SessionID("s_a") < SessionID("s_b"))
    #expect(!(SessionID("s_b") < SessionID("s_a")))
}
