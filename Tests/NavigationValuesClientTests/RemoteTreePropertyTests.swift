import Foundation
import NavigationValues
import NavigationValuesAPI
import NavigationValuesWire
import TestSupport
import Testing

@testable import NavigationValuesClient

/// The whole-tree mirror against the real server and the in-memory one: rounds of random changes of every kind (tabs,
/// sheets and covers nested, batches, returns, replace-above, moves, values, handlers, publishes)
/// from several writing clients at once, the mirror itself changing a path, the selection or a
/// presentation through its bindings in half the rounds; after each round, once the mirror has caught up to the
/// server's version, it equals `GET /v1/sessions/{id}` exactly, and its observed stacks, selection
/// and visible screen say the same, without ever starting again from a snapshot.
///
/// Seeded: a failure names its seed. `NAVIGATION_VALUES_TEST_SEED=N` runs that seed alone. The
/// operations each writer picks follow from the seed and what it read; in the rounds where the
/// writers send at once, the order the server applies them in may differ from run to run.
@MainActor
@Suite(.serialized) struct RemoteTreePropertyTests {
    nonisolated static let seeds: [UInt64] = {
        if let text = ProcessInfo.processInfo.environment["NAVIGATION_VALUES_TEST_SEED"], let seed = UInt64(text) {
            return [seed]
        }
        return [11, 12, 13, 14, 15, 16]
    }()

    @Test(arguments: ServerKind.allCases, seeds)
    func afterEachRoundOfRandomChangesTheTreeEqualsTheServer(server: ServerKind, seed: UInt64) async throws {
        try await withServer(server) { client, server in
            let session = try await client.createSession(root: ScreenSeed("Home"), schema: RemoteStackTests.schema)
            let tree = try await RemoteTree.connect(to: session)
            let writers = (0..<3).map { _ in server.rawHTTP() }
            var random = SplitMix64(state: seed)
            var view = try await session.get()
            var counts: [String: Int] = [:]
            for round in 0..<60 {
                let requests = writers.map { _ in RandomTreeRequest.next(view, step: round, &random) }
                for request in requests { counts[request.label, default: 0] += 1 }
                let atOnce = Bool.random(using: &random)
                // Half the rounds, the mirror writes too, through its bindings' awaited forms.
                let own = Bool.random(using: &random) ? TreeBindingChange.next(view, &random) : nil
                let ownChange = own.map { change in Task { @MainActor in await change.apply(to: tree) } }
                let statuses = try await send(requests, by: writers, session: session, atOnce: atOnce)
                if let failure = await ownChange?.value {
                    Issue.record(
                        "seed \(seed), round \(round): the mirror's \(own.map { "\($0)" } ?? "") failed: \(failure)")
                }
                for (request, status) in zip(requests, statuses) where ![200, 201, 204, 404, 409, 422].contains(status)
                {
                    Issue.record("seed \(seed), round \(round): \(request) answered \(status)")
                }
                view = try await session.get()
                try await tree.sync(to: view.version)
                guard check(tree, equals: view, "seed \(seed), round \(round) (\(requests.map(\.label)))") else {
                    return
                }
            }
            if seed.isMultiple(of: 2) {
                try await tree.sync(to: try await session.end())
                view = try await session.get()
                _ = check(tree, equals: view, "seed \(seed), after the end")
                #expect(tree.status == .ended)
            }
            #expect(tree.snapshotCount == 1, "seed \(seed): the mirror never fell out of step")
            #expect(tree.appliedEventCount == Int(view.version) - 1, "seed \(seed)")
            // The sequences did reach the stacks they are about.
            #expect(view.version > 60, "seed \(seed): \(counts)")
            tree.stop()
        }
    }

    /// Sends one request per writer, all at once or one after another; their statuses.
    func send(
        _ requests: [RandomTreeRequest], by writers: [RawHTTP], session: RemoteSession, atOnce: Bool
    ) async throws -> [Int] {
        let headers = ["Authorization": "Bearer \(session.token)", "Content-Type": "application/json"]
        let prefix = "/v1/sessions/\(session.id.rawValue)"
        guard atOnce else {
            var statuses: [Int] = []
            for (request, writer) in zip(requests, writers) {
                statuses.append(try await request.send(by: writer, prefix: prefix, headers: headers))
            }
            return statuses
        }
        return try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for (index, (request, writer)) in zip(requests, writers).enumerated() {
                group.addTask { (index, try await request.send(by: writer, prefix: prefix, headers: headers)) }
            }
            var statuses = Array(repeating: 0, count: requests.count)
            for try await (index, status) in group { statuses[index] = status }
            return statuses
        }
    }

    /// Whether the tree equals the server's session, as a resource and as what it observes.
    func check(_ tree: RemoteTree, equals server: SessionResource, _ context: String) -> Bool {
        let mirrored = tree.resource
        guard mirrored == server else {
            Issue.record(
                """
                \(context): the mirror differs from the server (rerun with NAVIGATION_VALUES_TEST_SEED)
                mirror: \(mirrored.json.serialized())
                server: \(server.json.serialized())
                """)
            return false
        }
        let observed = [tree.main.id] + server.stacks.map(\.id)
        #expect(tree.stacks.map(\.id) == observed, "\(context)")
        #expect(tree.tabs.map(\.id) == [.main] + server.stacks.filter { $0.kind == .tab }.map(\.id), "\(context)")
        #expect(tree.main.screens.map(\.id) == server.screens.map(\.id), "\(context)")
        for stack in server.stacks {
            let mirroredStack = tree.stack(stack.id)
            #expect(mirroredStack?.screens.map(\.id) == stack.screens.map(\.id), "\(context): \(stack.id)")
            #expect(mirroredStack?.kind == stack.kind && mirroredStack?.presenter == stack.presenter, "\(context)")
            if let presenter = stack.presenter {
                #expect(tree.stack(presentedBy: presenter)?.id == stack.id, "\(context)")
                #expect(tree.presentation(presentedBy: presenter)?.stack == stack.id, "\(context)")
            }
        }
        #expect(tree.selectedStackID == server.selectedStack, "\(context)")
        #expect(tree.visibleScreenID == server.visibleScreen, "\(context)")
        #expect(tree.visibleScreen?.id == server.visibleScreen, "\(context)")
        return true
    }
}

/// A change the mirror makes through its bindings (their awaited forms), chosen from what the
/// server showed at the round's start. Refusals other writers cause are part of the game.
enum TreeBindingChange: CustomStringConvertible {
    case path(StackID, [String])
    case select(StackID)
    case present(from: ScreenID, PresentationStyle)
    case dismiss(presentedBy: ScreenID)

    var description: String {
        switch self {
        case .path(let stack, let names): "path of \(stack) to \(names)"
        case .select(let stack): "selection of \(stack)"
        case .present(let screen, let style): "\(style) from \(screen)"
        case .dismiss(let screen): "dismissal of what \(screen) presents"
        }
    }

    static func next(_ session: SessionResource, _ random: inout SplitMix64) -> TreeBindingChange {
        let stacks = [StackResource(id: .main, kind: .main, screens: session.screens)] + session.stacks
        let stack = stacks.randomElement(using: &random) ?? stacks[0]
        let presentations = session.stacks.filter { $0.kind.isPresentation }
        switch Int.random(in: 0..<5, using: &random) {
        case 0, 1:
            let names = (0..<Int.random(in: 0...3, using: &random)).map { _ in
                RandomTreeRequest.names.randomElement(using: &random) ?? "A"
            }
            return .path(stack.id, names)
        case 2:
            let tabs = [StackID.main] + session.stacks.filter { $0.kind == .tab }.map(\.id)
            return .select(tabs.randomElement(using: &random) ?? .main)
        case 3:
            let style: PresentationStyle = Bool.random(using: &random) ? .sheet : .fullScreenCover
            return .present(from: stack.screens.last?.id ?? ScreenID("none"), style)
        default:
            let presenter = presentations.randomElement(using: &random)?.presenter
            return .dismiss(presentedBy: presenter ?? stack.screens.last?.id ?? ScreenID("none"))
        }
    }

    /// Applies the change; nil when it was applied or refused as another writer's change can make
    /// it, else what went wrong.
    @MainActor
    func apply(to tree: RemoteTree) async -> (any Error)? {
        do {
            switch self {
            case .path(let id, let names):
                guard let stack = tree.stack(id) else { return nil }
                try await stack.setPath(names.map { ScreenSeed($0) })
            case .select(let id):
                try await tree.select(id)
            case .present(let screen, let style):
                try await tree.present(ScreenSeed("Presented"), style: style, from: screen)
            case .dismiss(let screen):
                try await tree.dismiss(presentedBy: screen)
            }
            return nil
        } catch let error as RemoteError where [.notFound, .conflict, .invalid].contains(error.code) {
            return nil
        } catch {
            return error
        }
    }
}

/// One random request of a writer, chosen from what it last read of the session: any endpoint
/// that changes a session, or a batch of them. Refusals (a screen or stack gone meanwhile, a
/// presenter no longer on top, a full tree) are part of the game.
struct RandomTreeRequest: CustomStringConvertible, Sendable {
    var method: String
    var path: String
    var body: JSONValue?
    var label: String

    var description: String { "\(method) \(path) \(body?.serialized() ?? "")" }

    func send(by client: RawHTTP, prefix: String, headers: [String: String]) async throws -> Int {
        let answer = try await client.send(
            method, prefix + path, headers: headers, body: body.map { Array($0.serialized().utf8) })
        return answer.status
    }

    static let names = ["A", "B", "C"]
    static let tabs = ["t0", "t1", "t2"]
    static let values: [JSONValue] = ["x", "y", ""]

    static func next(_ session: SessionResource, step: Int, _ random: inout SplitMix64) -> RandomTreeRequest {
        if Int.random(in: 0..<6, using: &random) == 0 {
            let count = Int.random(in: 2...4, using: &random)
            var operations: [JSONValue] = []
            var labels: [String] = []
            for _ in 0..<count {
                let (label, operation) = operationMembers(session, step: step, inBatch: true, &random)
                operations.append(.object(operation))
                labels.append(label)
            }
            return RandomTreeRequest(
                method: "POST", path: "/batch", body: ["operations": .array(operations)],
                label: "batch(\(labels.joined(separator: ",")))")
        }
        let (label, operation) = operationMembers(session, step: step, inBatch: false, &random)
        return endpoint(for: operation, label: label)
    }

    /// A random operation as a batch writes it: `{"op": …, its members}`.
    static func operationMembers(
        _ session: SessionResource, step: Int, inBatch: Bool, _ random: inout SplitMix64
    ) -> (String, [String: JSONValue]) {
        let stacks = [StackResource(id: .main, kind: .main, screens: session.screens)] + session.stacks
        let stack = stacks.randomElement(using: &random) ?? stacks[0]
        let screens = stacks.flatMap(\.screens)
        func anyScreen() -> String {
            // In a batch, references that follow the steps before them keep the batch applying.
            if inBatch, Bool.random(using: &random) {
                return ["top", "main:top", "selected:top"].randomElement(using: &random) ?? "top"
            }
            return (screens.randomElement(using: &random)?.id.rawValue) ?? "top"
        }
        func stackReference() -> String {
            if inBatch, Bool.random(using: &random) {
                return ["top", "selected", "main"].randomElement(using: &random) ?? "top"
            }
            return stack.id.rawValue
        }
        func seed() -> JSONValue {
            var values: [String: JSONValue] = [:]
            if Bool.random(using: &random) { values["title"] = .string("s\(step)") }
            if Bool.random(using: &random) { values["counter"] = .integer(Int64.random(in: 0...3, using: &random)) }
            return ["name": .string(names.randomElement(using: &random) ?? "A"), "values": .object(values)]
        }
        func seeds() -> JSONValue { .array((0..<Int.random(in: 0...2, using: &random)).map { _ in seed() }) }
        let tabs = session.stacks.filter { $0.kind == .tab }
        let presentations = session.stacks.filter { $0.kind.isPresentation }
        switch Int.random(in: 0..<19, using: &random) {
        case 0, 1:
            guard case .object(var members) = seed() else { return ("push", [:]) }
            members["op"] = "push"
            members["stack"] = .string(stackReference())
            return ("push", members)
        case 2:
            return (
                "pop",
                [
                    "op": "pop", "stack": .string(stackReference()),
                    "count": .integer(Int64.random(in: 1...2, using: &random)),
                ]
            )
        case 3:
            let to = stack.screens.randomElement(using: &random)?.id.rawValue ?? "top"
            return ("popTo", ["op": "pop", "stack": .string(stack.id.rawValue), "to": .string(to)])
        case 4:
            return ("replacePath", ["op": "replacePath", "stack": .string(stackReference()), "screens": seeds()])
        case 5:
            return ("replaceAbove", ["op": "replaceAbove", "screen": .string(anyScreen()), "screens": seeds()])
        case 6, 7:
            var changes: [String: JSONValue] = [:]
            for key in ["title", "counter", "draft", "other"] where Bool.random(using: &random) {
                if Bool.random(using: &random) {
                    changes[key] =
                        key == "counter"
                        ? .integer(Int64.random(in: 0...3, using: &random))
                        : values.randomElement(using: &random) ?? "x"
                } else {
                    changes[key] = .null
                }
            }
            if changes.isEmpty { changes["title"] = "t" }
            return ("setValues", ["op": "setValues", "screen": .string(anyScreen()), "values": .object(changes)])
        case 8:
            if Bool.random(using: &random) {
                return (
                    "setHandler",
                    [
                        "op": "setHandler", "screen": .string(anyScreen()), "key": "selection",
                        "passBack": .bool(Bool.random(using: &random)),
                    ]
                )
            }
            return ("removeHandler", ["op": "removeHandler", "screen": .string(anyScreen()), "key": "selection"])
        case 9, 10:
            return (
                "publish",
                [
                    "op": "publish", "screen": .string(anyScreen()), "key": "selection",
                    "value": values.randomElement(using: &random) ?? "x",
                ]
            )
        case 11:
            // Returning from a presentation's root dismisses it; from a pushed screen, pops it.
            let screen = presentations.randomElement(using: &random).map { "\($0.id.rawValue):root" } ?? anyScreen()
            return (
                "return",
                [
                    "op": "return", "screen": .string(Bool.random(using: &random) ? screen : anyScreen()),
                    "key": "selection", "value": values.randomElement(using: &random) ?? "r",
                ]
            )
        case 12, 13:
            // A tab the session lacks, while it has fewer than all of them.
            let free = Self.tabs.filter { name in !tabs.contains { $0.id.rawValue == name } }
            var members: [String: JSONValue] = [
                "op": "createStack", "id": .string(free.randomElement(using: &random) ?? Self.tabs[0]),
            ]
            if Bool.random(using: &random) { members["root"] = seed() }
            return ("createStack", members)
        case 14:
            let choice = ([StackID.main] + tabs.map(\.id)).randomElement(using: &random) ?? .main
            if tabs.count > 1, Int.random(in: 0..<3, using: &random) == 0 {
                return (
                    "removeStack", ["op": "removeStack", "stack": .string(choice == .main ? "t0" : choice.rawValue)]
                )
            }
            return ("selectStack", ["op": "selectStack", "stack": .string(choice.rawValue)])
        case 15:
            guard tabs.count > 1, let index = tabs.indices.randomElement(using: &random) else {
                return ("selectStack", ["op": "selectStack", "stack": .string(tabs.first?.id.rawValue ?? "main")])
            }
            // Another place than its own, so the order changes.
            let position = (index + Int.random(in: 1..<tabs.count, using: &random)) % tabs.count
            return (
                "moveStack",
                ["op": "moveStack", "stack": .string(tabs[index].id.rawValue), "position": .integer(Int64(position))]
            )
        case 16, 17:
            // Only a stack's topmost screen presents: mostly one of those, nested presentations included.
            let from = Bool.random(using: &random) ? (stack.screens.last?.id.rawValue ?? "top") : anyScreen()
            let style: JSONValue = Bool.random(using: &random) ? "sheet" : "fullScreenCover"
            return ("present", ["op": "present", "from": .string(from), "style": style, "root": seed()])
        default:
            guard let choice = presentations.randomElement(using: &random) else {
                return (
                    "present",
                    ["op": "present", "from": .string(stack.screens.last?.id.rawValue ?? "top"), "root": seed()]
                )
            }
            return ("dismiss", ["op": "dismiss", "stack": .string(choice.id.rawValue)])
        }
    }

    /// The endpoint of docs/Stacks.md that makes a batch operation on its own.
    static func endpoint(for operation: [String: JSONValue], label: String) -> RandomTreeRequest {
        var members = operation
        let op = members.removeValue(forKey: "op")?.stringValue ?? ""
        func take(_ name: String) -> String { members.removeValue(forKey: name)?.stringValue ?? "" }
        func request(_ method: String, _ path: String, _ body: JSONValue?) -> RandomTreeRequest {
            RandomTreeRequest(method: method, path: path, body: body, label: label)
        }
        switch op {
        case "push": return request("POST", "/stacks/\(take("stack"))/push", .object(members))
        case "pop": return request("POST", "/stacks/\(take("stack"))/pop", .object(members))
        case "replacePath": return request("PUT", "/stacks/\(take("stack"))/path", .object(members))
        case "replaceAbove": return request("PUT", "/screens/\(take("screen"))/above", .object(members))
        case "setValues":
            let screen = take("screen")
            return request("PATCH", "/screens/\(screen)/values", members["values"])
        case "setHandler":
            let screen = take("screen")
            return request("PUT", "/screens/\(screen)/handlers/\(take("key"))", .object(members))
        case "removeHandler":
            let screen = take("screen")
            return request("DELETE", "/screens/\(screen)/handlers/\(take("key"))", nil)
        case "publish":
            let screen = take("screen")
            return request("POST", "/screens/\(screen)/preferences/\(take("key"))", .object(members))
        case "return": return request("POST", "/screens/\(take("screen"))/return", .object(members))
        case "createStack": return request("POST", "/stacks", .object(members))
        case "selectStack": return request("POST", "/select", .object(members))
        case "removeStack": return request("DELETE", "/stacks/\(take("stack"))", nil)
        case "moveStack": return request("POST", "/stacks/\(take("stack"))/move", .object(members))
        case "present": return request("POST", "/present", .object(members))
        default: return request("POST", "/dismiss", .object(members))
        }
    }
}
