/// A route's handler: synchronous ones run on the event-loop thread without a task.
package enum RouteHandler: Sendable {
    case synchronous(@Sendable (Request) throws -> Response)
    case asynchronous(@Sendable (Request) async throws -> Response)
    /// Answers at once when it can (on the event-loop thread), or defers to a task.
    case either(@Sendable (Request) -> ResponseFuture)

    func respond(to request: Request) -> ResponseFuture {
        switch self {
        case .either(let handler):
            return handler(request)
        case .synchronous(let handler):
            return .ready(Result { try handler(request) })
        case .asynchronous(let handler):
            // One closure, not `.async`'s two (its own around this one).
            return .deferred {
                do {
                    return .success(try await handler(request))
                } catch {
                    return .failure(error)
                }
            }
        }
    }
}

/// The routes as a tree of path segments. It is built while routes are registered and only read
/// afterwards, so looking a request up takes no lock.
///
/// A literal segment wins over a parameter at the first place two patterns differ: a lookup tries
/// the literal child before the parameter children (in the order they were registered).
struct RouteTree: Sendable {
    /// Where a route's pattern ends: its handlers by method. Immutable and shared: a lookup hands
    /// it on without copying its pattern, parameters and handlers (a struct's every reference was
    /// retained and released per request), and a registration replaces it rather than changing
    /// it, so that a responder already built keeps the routes it was built with.
    final class Endpoint: Sendable {
        let pattern: String
        /// The positions of the pattern's parameters, with their names.
        let parameters: [(index: Int, name: String)]
        let handlers: [HTTPMethod: RouteHandler]

        init(pattern: String, parameters: [(index: Int, name: String)], handlers: [HTTPMethod: RouteHandler]) {
            self.pattern = pattern
            self.parameters = parameters
            self.handlers = handlers
        }

        /// This endpoint with `handler` for `method`, replacing any it had.
        func adding(_ method: HTTPMethod, _ handler: RouteHandler) -> Endpoint {
            var handlers = handlers
            handlers[method] = handler
            return Endpoint(pattern: pattern, parameters: parameters, handlers: handlers)
        }

        /// The handler for `method`; a `GET` handler also answers `HEAD`.
        func handler(for method: HTTPMethod) -> RouteHandler? {
            handlers[method] ?? (method == .head ? handlers[.get] : nil)
        }
    }

    /// What the tree holds for a request's path and method.
    enum Match {
        case found(Endpoint, RouteHandler)
        /// Routes match the path but none has the method; `pattern` is the most specific of them.
        case methodNotAllowed(pattern: String, allowed: Set<String>)
        case notFound
    }

    fileprivate struct Node: Sendable {
        var literals: [String: Node] = [:]
        var parameters: [(name: String, node: Node)] = []
        var endpoint: Endpoint?
    }

    private enum Segment {
        case literal(String)
        case parameter(String)
    }

    private var root = Node()

    // MARK: - Building

    /// Adds a handler for `method` on `pattern`, replacing an earlier one for the same pair.
    mutating func add(_ method: HTTPMethod, _ pattern: String, _ handler: RouteHandler) {
        let segments: [Segment] = pattern.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
            $0.hasPrefix("{") && $0.hasSuffix("}") && $0.count > 2
                ? .parameter(String($0.dropFirst().dropLast())) : .literal(String($0))
        }
        var parameters: [(index: Int, name: String)] = []
        for (index, segment) in segments.enumerated() {
            if case .parameter(let name) = segment { parameters.append((index, name)) }
        }
        Self.insert(method, handler, at: segments[...], into: &root) {
            Endpoint(pattern: pattern, parameters: parameters, handlers: [:])
        }
    }

    private static func insert(
        _ method: HTTPMethod, _ handler: RouteHandler, at segments: ArraySlice<Segment>, into node: inout Node,
        endpoint: () -> Endpoint
    ) {
        guard let segment = segments.first else {
            node.endpoint = (node.endpoint ?? endpoint()).adding(method, handler)
            return
        }
        let rest = segments.dropFirst()
        switch segment {
        case .literal(let literal):
            insert(method, handler, at: rest, into: &node.literals[literal, default: Node()], endpoint: endpoint)
        case .parameter(let name):
            if let index = node.parameters.firstIndex(where: { $0.name == name }) {
                insert(method, handler, at: rest, into: &node.parameters[index].node, endpoint: endpoint)
            } else {
                var child = Node()
                insert(method, handler, at: rest, into: &child, endpoint: endpoint)
                node.parameters.append((name, child))
            }
        }
    }

    // MARK: - Looking up

    /// The tree as requests look it up, made once from the finished tree by `lookup()`: nodes are
    /// shared, so a lookup walks from node to node without copying each one's tables (a struct
    /// node's dictionary, array and endpoint were retained and released at every segment).
    final class Lookup: Sendable {
        let literals: [String: Lookup]
        let parameters: [Lookup]
        let endpoint: Endpoint?

        fileprivate init(_ node: Node) {
            literals = node.literals.mapValues { Lookup($0) }
            parameters = node.parameters.map { Lookup($0.node) }
            endpoint = node.endpoint
        }
    }

    /// The routes registered so far, for lookups; later registrations do not change it.
    func lookup() -> Lookup { Lookup(root) }
}

extension RouteTree.Lookup {
    typealias Match = RouteTree.Match
    typealias Endpoint = RouteTree.Endpoint

    /// The most specific route that matches `segments` and has a handler for `method`.
    func match(_ segments: [String], method: HTTPMethod) -> Match {
        var found: (Endpoint, RouteHandler)?
        var mostSpecific: Endpoint?
        var allowed = Set<String>()
        _ = Self.visitMatches(of: segments, from: 0, in: self) { endpoint in
            if let handler = endpoint.handler(for: method) {
                found = (endpoint, handler)
                return true
            }
            // `Allow` names the methods of the most specific route only: a concrete path shadows a
            // templated one that also matches (as OpenAPI reads paths), so `OPTIONS /v1/sessions/fork`
            // allows what `/v1/sessions/fork` takes, not what `/v1/sessions/{id}` does.
            guard mostSpecific == nil else { return false }
            mostSpecific = endpoint
            for method in endpoint.handlers.keys { allowed.insert(method.rawValue) }
            if endpoint.handlers[.get] != nil { allowed.insert(HTTPMethod.head.rawValue) }
            return false
        }
        if let (endpoint, handler) = found { return .found(endpoint, handler) }
        if let mostSpecific { return .methodNotAllowed(pattern: mostSpecific.pattern, allowed: allowed) }
        return .notFound
    }

    /// Calls `visit` with each route whose pattern matches `segments`, most specific first, until
    /// it returns true; returns whether it did.
    private static func visitMatches(
        of segments: [String], from index: Int, in node: RouteTree.Lookup, _ visit: (Endpoint) -> Bool
    ) -> Bool {
        guard index < segments.count else {
            guard let endpoint = node.endpoint else { return false }
            return visit(endpoint)
        }
        if let child = node.literals[segments[index]], visitMatches(of: segments, from: index + 1, in: child, visit) {
            return true
        }
        for parameter in node.parameters where visitMatches(of: segments, from: index + 1, in: parameter, visit) {
            return true
        }
        return false
    }
}
