import NavigationValues
import NavigationValuesWire

/// One operation of a batch (`POST …/batch`), read as the command its own endpoint would give,
/// with where its errors point (docs/Stacks.md, Batches).
struct BatchStep {
    var command: SessionCommand
    /// The operation's name (`push`, `setValues`, …).
    var name: String
    /// The operation in the batch: `/operations/2`.
    var pointer: String
    /// Where the command's own body sits in the batch (`/operations/2/values` for `setValues`).
    var bodyPointer: String

    /// The command's error, pointing into the batch: its field pointers moved under the
    /// operation, or the operation itself when it had none. Nothing of the batch is kept.
    func located(_ error: SessionError) -> SessionError {
        var located = error
        let index = pointer.split(separator: "/").last.map(String.init) ?? "?"
        located.detail = "operation \(index) (\(name)): \(error.detail)"
        located.fieldErrors =
            error.fieldErrors.isEmpty
            ? [SessionError.FieldError(pointer: pointer, detail: error.detail)]
            : error.fieldErrors.map { .init(pointer: bodyPointer + $0.pointer, detail: $0.detail) }
        return located
    }
}

extension CommandValidator {
    /// The operation names a batch takes.
    static let batchOperationNames = [
        "push", "pop", "replacePath", "replaceAbove", "setValues", "setHandler", "removeHandler", "publish", "return",
        "createStack", "selectStack", "removeStack", "moveStack", "present", "dismiss",
    ]

    /// The operations of `{"operations": [...]}`: 1 to `maxBatchOperations` of them.
    func batchOperations(_ body: JSONValue) throws(SessionError) -> [JSONValue] {
        let fields = try object(body, allowed: ["operations"])
        guard let list = fields["operations"]?.arrayValue else {
            throw SessionError(.invalid, "expected an array of operations", pointer: "/operations")
        }
        guard !list.isEmpty else {
            throw SessionError(.invalid, "a batch needs at least one operation", pointer: "/operations")
        }
        guard list.count <= limits.maxBatchOperations else {
            throw SessionError(
                .invalid, "a batch holds at most \(limits.maxBatchOperations) operations", pointer: "/operations")
        }
        return list
    }

    /// Reads operation `index`: `{"op": NAME, …}`, whose other members are the members of the
    /// operation's own endpoint body plus what its path names (`stack`, `screen`, `key`).
    func batchStep(_ item: JSONValue, at index: Int) throws(SessionError) -> BatchStep {
        let pointer = "/operations/\(index)"
        guard case .object(var members) = item else {
            throw SessionError(.invalid, "expected an operation: an object with op", pointer: pointer)
        }
        guard let name = members.removeValue(forKey: "op")?.stringValue else {
            throw SessionError(
                .invalid, "expected op, one of \(Self.batchOperationNames.joined(separator: ", "))",
                pointer: "\(pointer)/op")
        }
        /// Takes a member that addresses the operation (a stack, a screen, a key).
        func take(_ member: String, default fallback: String? = nil) throws(SessionError) -> String {
            guard let value = members.removeValue(forKey: member) else {
                guard let fallback else {
                    throw SessionError(.invalid, "\(name) needs \(member)", pointer: "\(pointer)/\(member)")
                }
                return fallback
            }
            guard let text = value.stringValue else {
                throw SessionError(.invalid, "expected a string", pointer: "\(pointer)/\(member)")
            }
            return text
        }
        /// The members left, which must be none.
        func nothingElse() throws(SessionError) {
            guard members.isEmpty else {
                let unknown = members.keys.sorted()
                throw SessionError(
                    .invalid, "unknown member(s): \(unknown.joined(separator: ", "))",
                    fieldErrors: unknown.map {
                        .init(pointer: "\(pointer)/\(JSONPointer.escaped($0))", detail: "unknown member")
                    })
            }
        }
        func step(_ command: SessionCommand, bodyPointer: String? = nil) -> BatchStep {
            BatchStep(command: command, name: name, pointer: pointer, bodyPointer: bodyPointer ?? pointer)
        }
        switch name {
        case "push":
            let stack = try take("stack", default: StackID.main.rawValue)
            return step(.push(stack: stack, body: .object(members)))
        case "pop":
            let stack = try take("stack", default: StackID.main.rawValue)
            return step(.pop(stack: stack, body: .object(members)))
        case "replacePath":
            let stack = try take("stack", default: StackID.main.rawValue)
            return step(.replacePath(stack: stack, body: .object(members)))
        case "replaceAbove":
            return step(.replaceAbove(screen: try take("screen"), body: .object(members)))
        case "setValues":
            let screen = try take("screen")
            guard let values = members.removeValue(forKey: "values") else {
                throw SessionError(.invalid, "setValues needs values", pointer: "\(pointer)/values")
            }
            try nothingElse()
            return step(.patchValues(screen: screen, body: values), bodyPointer: "\(pointer)/values")
        case "setHandler":
            let screen = try take("screen")
            let key = try take("key")
            return step(.setHandler(screen: screen, key: key, body: .object(members)))
        case "removeHandler":
            let screen = try take("screen")
            let key = try take("key")
            try nothingElse()
            return step(.removeHandler(screen: screen, key: key))
        case "publish":
            let screen = try take("screen")
            let key = try take("key")
            return step(.publish(screen: screen, key: key, body: .object(members)))
        case "return":
            return step(.returnResult(screen: try take("screen"), body: .object(members)))
        case "createStack":
            return step(.createStack(.object(members)))
        case "selectStack":
            return step(.selectStack(.object(members)))
        case "removeStack":
            let stack = try take("stack")
            try nothingElse()
            return step(.removeStack(stack: stack))
        case "moveStack":
            return step(.moveStack(stack: try take("stack"), body: .object(members)))
        case "present":
            return step(.present(.object(members)))
        case "dismiss":
            return step(.dismiss(.object(members)))
        default:
            throw SessionError(
                .invalid,
                "unknown operation '\(name)'; expected one of \(Self.batchOperationNames.joined(separator: ", "))",
                pointer: "\(pointer)/op")
        }
    }
}
