import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesClient

/// An app's routes: enum cases with and without associated values.
enum AppRoute: RemoteRoute {
    case inbox
    case message(id: Int)
    case search(query: String, page: Int)
}

/// A route type encoded as a `String` raw value.
enum Tab: String, RemoteRoute {
    case home, settings
}

/// A route type that is a struct.
struct Article: RemoteRoute {
    var slug: String
    var draft: Bool
}

/// The bindings of the mirror: what `NavigationStack(path:)`, `TabView(selection:)` and
/// `.sheet`/`.fullScreenCover` read and set, each change one request and one event, reading as set
/// while it flies and as the server's again after a refusal.
@MainActor
@Suite struct RemoteTreeBindingTests {
    @Test func routesMapToScreensAndBack() throws {
        #expect(try AppRoute.inbox.screenSeed() == ScreenSeed("inbox"))
        #expect(try AppRoute.message(id: 7).screenSeed() == ScreenSeed("message", values: ["id": 7]))
        #expect(
            try AppRoute.search(query: "q", page: 2).screenSeed()
                == ScreenSeed("search", values: ["query": "q", "page": 2]))
        #expect(try Tab.settings.screenSeed() == ScreenSeed("settings"))
        #expect(
            try Article(slug: "a", draft: true).screenSeed()
                == ScreenSeed("Article", values: ["slug": "a", "draft": true]))
        for route in [AppRoute.inbox, .message(id: 7), .search(query: "q", page: 2)] {
            #expect(AppRoute(try route.screenSeed()) == route)
        }
        #expect(Tab(try Tab.home.screenSeed()) == .home)
        #expect(Article(try Article(slug: "a", draft: false).screenSeed()) == Article(slug: "a", draft: false))
        // Values written later that the route does not declare are ignored; a screen of another
        // type, or missing a member, is no route.
        #expect(AppRoute(screenName: "message", values: ["id": 7, "title": "x"]) == .message(id: 7))
        #expect(AppRoute(screenName: "message", values: [:]) == nil)
        #expect(AppRoute(screenName: "Home", values: [:]) == nil)
        #expect(Tab(screenName: "inbox", values: [:]) == nil)
    }

    @Test(arguments: ServerKind.allCases) func aPathOfRoutesOnAnyStackIsOneRequestAndKeepsTheScreensThatStay(
        server: ServerKind
    ) async throws {
        try await withServer(server) { client, server in
            let http = server.rawHTTP()
            let (session, tree, search) = try await treeWithATab(client, root: "inbox")
            @MainActor func change(_ routes: [AppRoute], sends kinds: [String]) async throws {
                let before = tree.version
                try await search.setRoutes(routes)
                #expect(search.routes(AppRoute.self) == routes)
                #expect(try await eventKinds(of: session, after: before) == kinds, "to \(routes)")
                #expect(tree.resource == (try await session.get()))
            }
            try await change([.message(id: 1), .message(id: 2)], sends: ["stack.path.replaced"])
            let first = search.screens[1].id
            try await change([.message(id: 1), .message(id: 2), .inbox], sends: ["stack.screen.pushed"])
            try await change([.message(id: 1), .search(query: "q", page: 1)], sends: ["screens.replaced"])
            #expect(search.screens[1].id == first, "the screen that stays keeps its id")
            try await change([.message(id: 1)], sends: ["stack.screens.popped"])
            try await change([], sends: ["stack.screens.popped"])
            try await change([], sends: [])
            // A presentation's own path.
            try await sendRaw(http, session, "POST", "/present", ["from": "search:root", "root": ["name": "inbox"]])
            try await tree.sync(to: try await session.get().version)
            let sheet = try #require(tree.presentations.first)
            try await sheet.setRoutes([AppRoute.inbox, .message(id: 3)])
            #expect(sheet.routes(AppRoute.self) == [.inbox, .message(id: 3)])
            #expect(sheet.screens.map(\.name) == ["inbox", "inbox", "message"])
            #expect(sheet.screens.last?.value(named: "id") == 3)
        }
    }

    @Test(arguments: ServerKind.allCases) func anAssignedPathReadsAsSetThenRollsBackWhenRefused(
        server: ServerKind
    ) async throws {
        try await withServer(server) { client, server in
            let http = server.rawHTTP()
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: RemoteStackTests.schema)
            let tree = try await RemoteTree.connect(to: session)
            tree.main.requestRoutes([AppRoute.inbox, .message(id: 9)])
            #expect(tree.main.routes(AppRoute.self) == [.inbox, .message(id: 9)], "at once")
            #expect(tree.main.screen(atPathIndex: 1) == nil, "not on the server yet")
            try await waitFor("the change") { tree.main.pendingPath == nil }
            #expect(tree.main.screens.map(\.name) == ["Home", "inbox", "message"])
            #expect(tree.main.screen(atPathIndex: 1)?.name == "message")
            #expect(tree.main.pathError == nil)

            // The top presents: pushing above it is refused (docs/Stacks.md rule 2).
            try await sendRaw(http, session, "POST", "/present", ["root": ["name": "Sheet"]])
            try await tree.sync(to: try await session.get().version)
            let version = tree.version
            tree.main.requestRoutes([AppRoute.inbox, .message(id: 9), .inbox])
            #expect(tree.main.routes(AppRoute.self).count == 3)
            try await waitFor("the refusal") { tree.main.pathError != nil }
            #expect(tree.main.pathError?.code == .conflict)
            #expect(tree.main.routes(AppRoute.self) == [.inbox, .message(id: 9)], "the server's again")
            #expect(try await session.get().version == version, "nothing changed")
        }
    }

    @Test(arguments: ServerKind.allCases) func theSelectionIsOneRequestAndRollsBackWhenRefused(
        server: ServerKind
    ) async throws {
        try await withServer(server) { client, server in
            let http = server.rawHTTP()
            let session = try await client.createSession(root: ScreenSeed("Home"))
            try await sendRaw(http, session, "POST", "/stacks", ["id": "search"])
            let tree = try await RemoteTree.connect(to: session)
            let before = tree.version
            tree.selection = StackID("search")
            #expect(tree.selection == StackID("search"), "at once")
            #expect(tree.selectedStackID == .main, "the server's, until its event")
            try await waitFor("the selection") { tree.selectedStackID == StackID("search") }
            #expect(try await eventKinds(of: session, after: before) == ["stack.selected"])
            tree.selection = StackID("search")  // the same: nothing is sent
            #expect(tree.pendingSelection == nil)

            // A presentation cannot be selected.
            let sheet = try await sendRaw(http, session, "POST", "/present", ["root": ["name": "Sheet"]])
            let sheetID = StackID(try #require(sheet["stack"]?["id"]?.stringValue))
            tree.selection = sheetID
            #expect(tree.selection == sheetID)
            try await waitFor("the refusal") { tree.selectionError != nil }
            #expect(tree.selectionError?.code == .conflict)
            #expect(tree.selection == StackID("search"))
            try await tree.select(.main)
            #expect(tree.selectedStackID == .main)
        }
    }

    @Test(arguments: ServerKind.allCases) func presentingAndDismissingThroughTheBindingAreOneRequestEach(
        server: ServerKind
    ) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let tree = try await RemoteTree.connect(to: session)
            let home = try #require(tree.main.top?.id)

            // What `.sheet(item:)` shows is there at once, without a stack until the server's event.
            let before = tree.version
            tree.requestPresentation(AppRoute.message(id: 4), style: .sheet, from: home)
            let asked = try #require(tree.presentation(presentedBy: home, style: .sheet))
            #expect(asked.stack == nil && asked.route(AppRoute.self) == .message(id: 4))
            #expect(tree.presentation(presentedBy: home, style: .fullScreenCover) == nil)
            try await waitFor("the presentation") { tree.presentation(presentedBy: home)?.stack != nil }
            #expect(tree.presentation(presentedBy: home)?.id == asked.id, "the same item for SwiftUI")
            #expect(try await eventKinds(of: session, after: before) == ["stack.presented"])
            #expect(tree.visibleScreen?.name == "message")

            // A user's dismissal (SwiftUI sets the item binding to nil): one dismissal.
            let presented = tree.version
            tree.setPresentation(nil, presentedBy: home, style: .sheet)
            #expect(tree.presentation(presentedBy: home) == nil, "at once")
            try await waitFor("the dismissal") { tree.presentations.isEmpty && tree.pendingPresentations.isEmpty }
            #expect(try await eventKinds(of: session, after: presented) == ["stack.dismissed"])
            // The cover binding set to nil while a sheet is up dismisses nothing.
            try await tree.present(AppRoute.inbox, style: .sheet, from: home)
            let sheetUp = tree.version
            tree.setPresentation(nil, presentedBy: home, style: .fullScreenCover)
            #expect(tree.pendingPresentations.isEmpty)
            #expect(tree.version == sheetUp)
            // Another presentation from the same screen replaces it in one step.
            tree.setPresentation(
                Presentation(presenter: home, style: .fullScreenCover, root: ScreenSeed("Camera")), presentedBy: home,
                style: .fullScreenCover)
            #expect(tree.presentation(presentedBy: home, style: .sheet) == nil)
            #expect(tree.presentation(presentedBy: home, style: .fullScreenCover)?.root.name == "Camera")
            try await waitFor("the replacement") { tree.pendingPresentations.isEmpty }
            #expect(try await eventKinds(of: session, after: sheetUp) == ["batch.applied"])
            #expect(tree.presentations.map(\.style) == [.fullScreenCover])
            try await tree.dismiss(presentedBy: home)
            #expect(tree.presentations.isEmpty)

            // A screen that is not its stack's top cannot present: refused, and it reads nil again.
            try await tree.main.setPath([ScreenSeed("Detail")])
            tree.requestPresentation(ScreenSeed("Sheet"), style: .fullScreenCover, from: home)
            #expect(tree.presentation(presentedBy: home)?.style == .fullScreenCover)
            try await waitFor("the refusal") { tree.presentationError != nil }
            #expect(tree.presentationError?.code == .conflict)
            #expect(tree.presentation(presentedBy: home) == nil)
        }
    }

    /// What the SwiftUI layer binds, as properties: a stack's path of routes with each element's
    /// place, the screen each destination reads, and the sheet and cover over the stack.
    @Test(arguments: ServerKind.allCases) func aRoutedStackIsWhatTheSwiftUILayerBinds(server: ServerKind) async throws {
        try await withServer(server) { client, _ in
            let session = try await client.createSession(root: ScreenSeed("Home"))
            let tree = try await RemoteTree.connect(to: session)
            let routes = RoutedStack(tree.main, as: AppRoute.self)
            // NavigationLink(value:) pushes the next element; the same route twice keeps two places.
            routes.path = [routes.element(pushing: .inbox)]
            routes.path.append(routes.element(pushing: .inbox))
            #expect(
                routes.path == [RemotePathElement(index: 0, route: .inbox), RemotePathElement(index: 1, route: .inbox)])
            try await waitFor("the path") { tree.main.pendingPath == nil && tree.main.screens.count == 3 }
            #expect(routes.screen(for: routes.path[1])?.id == tree.main.screens[2].id)
            #expect(routes.screen(for: routes.path[0])?.id == tree.main.screens[1].id)
            #expect(routes.rootScreen?.name == "Home")

            // The cover binding shows what the top presents as a cover; nil from SwiftUI dismisses it.
            let top = try #require(tree.main.top?.id)
            try await tree.present(AppRoute.message(id: 1), style: .fullScreenCover, from: top)
            #expect(routes.sheet == nil)
            #expect(routes.fullScreenCover?.route(AppRoute.self) == .message(id: 1))
            #expect(routes.presentation?.style == .fullScreenCover, "either style, for macOS")
            let cover = try #require(routes.fullScreenCover)
            let presented = RoutedStack(cover, in: tree, as: AppRoute.self)
            #expect(presented.rootScreen?.name == "message")
            presented.path = [presented.element(pushing: .inbox)]
            try await waitFor("the cover's path") { presented.stack?.screens.count == 2 }
            routes.sheet = nil  // no sheet is up: nothing is sent
            #expect(tree.pendingPresentations.isEmpty)
            routes.fullScreenCover = nil
            #expect(routes.fullScreenCover == nil)
            try await waitFor("the dismissal") { tree.presentations.isEmpty }
            #expect(presented.stack == nil && presented.path.isEmpty, "a dismissed stack reads empty")
            presented.path = [presented.element(pushing: .inbox)]  // and sends nothing
            #expect(tree.main.pathError == nil)
        }
    }

    /// Offline, a binding's change reads as set and waits in the client's queue, which the mirror
    /// shows; once the server is back it is sent once and the mirror shows its event.
    @Test func aChangeMadeOfflineReadsAsSetAndIsShownPending() async throws {
        try await withServer { direct, server in
            let proxy = try DroppingProxy(upstreamPort: server.port)
            defer { proxy.close() }
            let client = makeClient(loopbackURL(port: proxy.port)) { configuration in
                configuration.retry = RetryPolicy(
                    maxAttempts: 2, initialDelay: .milliseconds(5), maxDelay: .milliseconds(10))
                configuration.offline = OfflineOptions(
                    retryInterval: .milliseconds(20), maxRetryInterval: .milliseconds(100))
            }
            let setup = try await direct.createSession(root: ScreenSeed("Home"))
            let tree = try await RemoteTree.connect(to: client.session(id: setup.id, token: setup.token))
            defer { tree.stop() }
            let home = try #require(tree.main.root?.id)

            proxy.setReachable(false)
            tree.requestPresentation(AppRoute.inbox, style: .sheet, from: home)
            #expect(tree.presentation(presentedBy: home)?.root.name == "inbox", "as set, offline")
            try await waitFor("the presentation queued") { tree.pendingMutations.count == 1 }
            #expect(tree.pendingMutations.first?.label == "POST /v1/sessions/\(setup.id.rawValue)/present")
            #expect(try await setup.get().version == 1, "nothing reached the server")

            proxy.setReachable(true)
            try await waitFor("the presentation applied") { tree.presentation(presentedBy: home)?.stack != nil }
            try await waitFor("nothing pending") { tree.pendingMutations.isEmpty && tree.pendingPresentations.isEmpty }
            #expect(tree.presentationError == nil)
            let server = try await setup.get()
            try await tree.sync(to: server.version)
            #expect(tree.resource == server)
            #expect(try await eventKinds(of: setup, after: 1) == ["stack.presented"], "sent once")
        }
    }
}
