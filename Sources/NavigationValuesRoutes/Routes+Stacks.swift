import HTTPCore
import NavigationValues
import NavigationValuesSessions

// The routes of several stacks per session (docs/Stacks.md, Over HTTP). Each is additive: the
// routes of docs/API.md keep addressing the main stack.

extension SessionRoutes {
    func registerStacks(on router: Router) {
        query("/v1/sessions/{id}/stacks", router) { _ in .stacks }
        query("/v1/sessions/{id}/stacks/{stack}", router) { request in .stack(request.parameters["stack"] ?? "") }
        command(.post, "/v1/sessions/{id}/stacks", router) { request in .createStack(try jsonBody(request) ?? [:]) }
        command(.delete, "/v1/sessions/{id}/stacks/{stack}", router) { request in
            .removeStack(stack: request.parameters["stack"] ?? "")
        }
        command(.post, "/v1/sessions/{id}/stacks/{stack}/push", router) { request in
            .push(stack: request.parameters["stack"] ?? "", body: try jsonBody(request) ?? [:])
        }
        command(.post, "/v1/sessions/{id}/stacks/{stack}/pop", router) { request in
            .pop(stack: request.parameters["stack"] ?? "", body: try jsonBody(request) ?? [:])
        }
        command(.put, "/v1/sessions/{id}/stacks/{stack}/path", router) { request in
            .replacePath(stack: request.parameters["stack"] ?? "", body: try jsonBody(request) ?? [:])
        }
        command(.post, "/v1/sessions/{id}/stacks/{stack}/move", router) { request in
            .moveStack(stack: request.parameters["stack"] ?? "", body: try jsonBody(request) ?? [:])
        }
        command(.post, "/v1/sessions/{id}/select", router) { request in .selectStack(try jsonBody(request) ?? [:]) }
        command(.post, "/v1/sessions/{id}/present", router) { request in .present(try jsonBody(request) ?? [:]) }
        command(.post, "/v1/sessions/{id}/dismiss", router) { request in .dismiss(try jsonBody(request) ?? [:]) }
        command(.put, "/v1/sessions/{id}/screens/{screen}/above", router) { request in
            .replaceAbove(screen: request.parameters["screen"] ?? "", body: try jsonBody(request) ?? [:])
        }
        command(.post, "/v1/sessions/{id}/screens/{screen}/return", router) { request in
            .returnResult(screen: request.parameters["screen"] ?? "", body: try jsonBody(request) ?? [:])
        }
        command(.post, "/v1/sessions/{id}/batch", router) { request in .batch(try jsonBody(request) ?? [:]) }
    }
}
