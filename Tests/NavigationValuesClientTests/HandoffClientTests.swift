import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesClient
import NavigationValuesSessions
import NavigationValuesWire
import Testing

/// "Continue on my other device" through the client: the phone makes a code
/// (`RemoteSession.handoff(fork:)`), the tablet redeems it (`NavigationValuesClient.redeem(_:)`)
/// with a client of its own that holds no token, and each refusal is a typed `RemoteError`.
@Suite struct HandoffClientTests {
    /// The tablet: a client of the same server without the admin token.
    func tablet(_ phone: NavigationValuesClient) -> NavigationValuesClient {
        makeClient(sameServerAs: phone) { $0.adminToken = nil }
    }

    @Test(arguments: ServerKind.allCases) func theTabletContinuesTheSessionWithATokenOfItsOwn(server: ServerKind)
        async throws
    {
        try await withServer(server) { phone, _ in
            let session = try await phone.createSession(root: ScreenSeed("Home"))
            try await session.push("Cart")
            let made = try await session.handoff()
            #expect(made.code.hasPrefix("h_"))
            #expect(made.session == session.id && !made.fork && made.version == 2)
            #expect(made.expiresAt > Date())

            let continued = try await tablet(phone).redeem(made.code)
            #expect(continued.id == session.id)
            #expect(continued.token != session.token)
            try await continued.push("Checkout")
            #expect(try await session.get().screens.map(\.name) == ["Home", "Cart", "Checkout"])
            await expectRemoteError(.handoffUsed, status: 409) { try await tablet(phone).redeem(made.code) }
        }
    }

    @Test(arguments: ServerKind.allCases) func aForkHandoffGivesTheTabletASessionOfItsOwn(server: ServerKind)
        async throws
    {
        try await withServer(server) { phone, _ in
            let session = try await phone.createSession(root: ScreenSeed("Home"))
            let made = try await session.handoff(fork: true)
            try await session.push("OnlyOnThePhone")
            let fork = try await tablet(phone).redeem(made.code)
            #expect(fork.id != session.id)
            let resource = try await fork.get()
            #expect(resource.origin?.session == session.id && resource.origin?.version == 1)
            #expect(resource.screens.map(\.name) == ["Home"])
        }
    }

    @Test func eachRefusalIsATypedError() async throws {
        try await withServer(configure: {
            $0.service.handoffLifetime = .seconds(1)
        }) { phone, _ in
            let tablet = tablet(phone)
            await expectRemoteError(.handoffInvalid, status: 400) { try await tablet.redeem("h_not-a-code") }
            let session = try await phone.createSession(root: ScreenSeed("Home"))
            let code = try await session.handoff().code
            try await Task.sleep(for: .milliseconds(1_100))
            await expectRemoteError(.handoffExpired, status: 410) { try await tablet.redeem(code) }
        }
        try await withServer(configure: { $0.service.maxHandoffsPerSession = 2 }) { phone, _ in
            let tablet = tablet(phone)
            let ended = try await phone.createSession(root: ScreenSeed("Home"))
            let endedCode = try await ended.handoff().code
            _ = try await ended.end()
            await expectRemoteError(.handoffSessionEnded, status: 410) { try await tablet.redeem(endedCode) }

            let purged = try await phone.createSession(root: ScreenSeed("Home"))
            let purgedCode = try await purged.handoff().code
            try await purged.purge()
            await expectRemoteError(.handoffSessionPurged, status: 410) { try await tablet.redeem(purgedCode) }

            let session = try await phone.createSession(root: ScreenSeed("Home"))
            for _ in 0..<2 { _ = try await session.handoff() }
            await expectRemoteError(.tooManyHandoffs, status: 429) { try await session.handoff() }
        }
    }
}
