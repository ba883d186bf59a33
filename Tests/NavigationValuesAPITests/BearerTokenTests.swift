import Testing

@testable import NavigationValuesRoutes

/// The bearer token read on an ASCII value's bytes is the one read on its characters.
@Suite struct BearerTokenTests {
    @Test func bytesAndCharactersReadTheSameToken() {
        let values = [
            "Bearer t_abc", "bearer t_abc", "BEARER t_abc", "Bearer   t_abc  ", "  Bearer t_abc", "Bearer \tt_abc\t ",
            "Bearer", "Bearer ", "Bearer \t ", "Bearer\tt_abc", "Bearers t_abc", "t_abc", "", " ", "Basic dXNlcg==",
            "Bearer a b", "bEaReR x",
        ]
        for value in values {
            #expect(SessionRoutes.asciiBearerToken(value) == SessionRoutes.characterBearerToken(value), "\(value)")
        }
        #expect(SessionRoutes.bearerToken("Bearer   t_abc  ") == "t_abc")
        #expect(SessionRoutes.bearerToken("Basic t_abc") == "")
        // Other characters are read as characters.
        #expect(SessionRoutes.asciiBearerToken("Bearer t_é") == nil)
        #expect(SessionRoutes.bearerToken("Bearer t_é ") == "t_é")
    }
}
