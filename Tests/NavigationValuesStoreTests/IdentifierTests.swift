import NavigationValuesStore
import NavigationValuesWire
import Testing

@Test func sessionIDsOrderByRawValue() {
    #expect(SessionID("s_a") < SessionID("s_b"))
    #expect(!(SessionID("s_b") < SessionID("s_a")))
}
