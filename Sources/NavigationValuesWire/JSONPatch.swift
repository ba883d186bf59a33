import Foundation
import NavigationValues

/// An RFC 6902 JSON Patch: operations that, applied in order, turn one JSON document into
/// another. `GET /v1/sessions/{id}/diff` answers one, from the session at one revision to the
/// session at another.
///
/// ```swift
/// let patch = JSONPatch.difference(from: ["a": 1], to: ["a": 2, "b": true])
/// patch.json          // [{"op": "replace", "path": "/a", "value": 2}, {"op": "add", "path": "/b", "value": true}]
/// try patch.applied(to: ["a": 1]) == ["a": 2, "b": true]
/// ```
public struct JSONPatch: Sendable, Equatable {
    /// One operation (RFC 6902 §4). Paths are JSON pointers (RFC 6901).
    public enum Operation: Sendable, Equatable {
        case add(path: String, value: JSONValue)
        case remove(path: String)
        case replace(path: String, value: JSONValue)
        case move(from: String, path: String)
        case copy(from: String, path: String)
        /// Fails the whole patch unless the value at `path` equals `value`.
        case test(path: String, value: JSONValue)
    }

    public var operations: [Operation]

    public init(_ operations: [Operation]) {
        self.operations = operations
    }

    /// Whether the patch changes nothing.
    public var isEmpty: Bool { operations.isEmpty }

    // MARK: - Difference

    /// The patch that turns `source` into `target`: members removed, added or replaced by name;
    /// arrays compared position by position, extra elements removed from the end (highest index
    /// first) or added at the end. A stack of screens changes at its top, so a push is one `add`
    /// and a pop one `remove` per screen. Equal values give an empty patch.
    public static func difference(from source: JSONValue, to target: JSONValue) -> JSONPatch {
        var operations: [Operation] = []
        difference(from: source, to: target, at: "", into: &operations)
        return JSONPatch(operations)
    }

    private static func difference(
        from source: JSONValue, to target: JSONValue, at path: String, into operations: inout [Operation]
    ) {
        guard source != target else { return }
        switch (source, target) {
        case (.object(let old), .object(let new)):
            for name in old.keys.sorted() where new[name] == nil {
                operations.append(.remove(path: path + "/" + JSONPointer.escaped(name)))
            }
            for name in new.keys.sorted() {
                let child = path + "/" + JSONPointer.escaped(name)
                guard let value = new[name] else { continue }
                if let previous = old[name] {
                    difference(from: previous, to: value, at: child, into: &operations)
                } else {
                    operations.append(.add(path: child, value: value))
                }
            }
        case (.array(let old), .array(let new)):
            for index in 0..<min(old.count, new.count) {
                difference(from: old[index], to: new[index], at: "\(path)/\(index)", into: &operations)
            }
            if old.count > new.count {
                for index in (new.count..<old.count).reversed() { operations.append(.remove(path: "\(path)/\(index)")) }
            } else {
                for index in old.count..<new.count {
                    operations.append(.add(path: "\(path)/\(index)", value: new[index]))
                }
            }
        default:
            operations.append(.replace(path: path, value: target))
        }
    }

    // MARK: - Applying

    /// `document` with every operation applied in order (RFC 6902 §5: the first one that fails
    /// fails the whole patch).
    ///
    /// - Throws: `JSONPatchError` naming the operation and what was wrong.
    public func applied(to document: JSONValue) throws(JSONPatchError) -> JSONValue {
        var document = document
        for (index, operation) in operations.enumerated() {
            do {
                document = try Self.apply(operation, to: document)
            } catch {
                throw JSONPatchError(operation: index, reason: error.reason)
            }
        }
        return document
    }

    private struct Failure: Error {
        var reason: String
    }

    private static func apply(_ operation: Operation, to document: JSONValue) throws(Failure) -> JSONValue {
        switch operation {
        case .add(let path, let value):
            return try add(value, at: try tokens(path), in: document)
        case .remove(let path):
            return try remove(at: try tokens(path), in: document).document
        case .replace(let path, let value):
            let tokens = try tokens(path)
            _ = try self.value(at: tokens, in: document)
            return try replace(at: tokens[...], in: document, with: value)
        case .move(let from, let path):
            let source = try tokens(from)
            let target = try tokens(path)
            guard source == target || !target.starts(with: source) else {
                throw Failure(reason: "cannot move \(from) into its own child \(path)")
            }
            let (removed, rest) = try remove(at: source, in: document)
            return try add(removed, at: target, in: rest)
        case .copy(let from, let path):
            return try add(try value(at: try tokens(from), in: document), at: try tokens(path), in: document)
        case .test(let path, let expected):
            guard try value(at: try tokens(path), in: document) == expected else {
                throw Failure(reason: "the value at '\(path)' is not \(expected.serialized())")
            }
            return document
        }
    }

    /// The reference tokens of a JSON pointer (RFC 6901 §3-4): `""` is the whole document.
    private static func tokens(_ pointer: String) throws(Failure) -> [String] {
        guard !pointer.isEmpty else { return [] }
        guard pointer.hasPrefix("/") else { throw Failure(reason: "'\(pointer)' is not a JSON pointer") }
        return pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
            $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
        }
    }

    /// An array index token: digits without a leading zero (RFC 6901 §4).
    private static func index(_ token: String, count: Int, allowingEnd: Bool) throws(Failure) -> Int {
        if allowingEnd, token == "-" { return count }
        guard let index = Int(token), token.allSatisfy(\.isASCII), token == String(index), index >= 0,
            index < count || (allowingEnd && index == count)
        else { throw Failure(reason: "'\(token)' is not an index of an array of \(count)") }
        return index
    }

    private static func value(at tokens: [String], in document: JSONValue) throws(Failure) -> JSONValue {
        var current = document
        for token in tokens {
            switch current {
            case .object(let members):
                guard let member = members[token] else { throw Failure(reason: "no member '\(token)'") }
                current = member
            case .array(let items):
                current = items[try index(token, count: items.count, allowingEnd: false)]
            default:
                throw Failure(reason: "'\(token)' is inside a \(current.typeName)")
            }
        }
        return current
    }

    /// `document` with the value at `tokens` (which exists, or whose parent exists) replaced by
    /// what `change` makes of the parent.
    private static func updating(
        _ tokens: ArraySlice<String>, in document: JSONValue,
        _ change: (inout JSONValue, String) throws(Failure) -> Void
    ) throws(Failure) -> JSONValue {
        guard let first = tokens.first else { return document }
        var document = document
        if tokens.count == 1 {
            try change(&document, first)
            return document
        }
        switch document {
        case .object(var members):
            guard let child = members[first] else { throw Failure(reason: "no member '\(first)'") }
            members[first] = try updating(tokens.dropFirst(), in: child, change)
            return .object(members)
        case .array(var items):
            let position = try index(first, count: items.count, allowingEnd: false)
            items[position] = try updating(tokens.dropFirst(), in: items[position], change)
            return .array(items)
        default:
            throw Failure(reason: "'\(first)' is inside a \(document.typeName)")
        }
    }

    private static func add(_ value: JSONValue, at tokens: [String], in document: JSONValue) throws(Failure)
        -> JSONValue
    {
        guard !tokens.isEmpty else { return value }
        return try updating(tokens[...], in: document) { (parent: inout JSONValue, token: String) throws(Failure) in
            switch parent {
            case .object(var members):
                members[token] = value
                parent = .object(members)
            case .array(var items):
                items.insert(value, at: try index(token, count: items.count, allowingEnd: true))
                parent = .array(items)
            default:
                throw Failure(reason: "cannot add '\(token)' to a \(parent.typeName)")
            }
        }
    }

    private static func remove(at tokens: [String], in document: JSONValue) throws(Failure)
        -> (removed: JSONValue, document: JSONValue)
    {
        guard !tokens.isEmpty else { throw Failure(reason: "cannot remove the whole document") }
        let removed = try value(at: tokens, in: document)
        let rest = try updating(tokens[...], in: document) { (parent: inout JSONValue, token: String) throws(Failure) in
            switch parent {
            case .object(var members):
                members[token] = nil
                parent = .object(members)
            case .array(var items):
                items.remove(at: try index(token, count: items.count, allowingEnd: false))
                parent = .array(items)
            default:
                throw Failure(reason: "cannot remove '\(token)' from a \(parent.typeName)")
            }
        }
        return (removed, rest)
    }

    private static func replace(at tokens: ArraySlice<String>, in document: JSONValue, with value: JSONValue)
        throws(Failure) -> JSONValue
    {
        guard !tokens.isEmpty else { return value }
        return try updating(tokens, in: document) { (parent: inout JSONValue, token: String) throws(Failure) in
            switch parent {
            case .object(var members):
                members[token] = value
                parent = .object(members)
            case .array(var items):
                items[try index(token, count: items.count, allowingEnd: false)] = value
                parent = .array(items)
            default:
                throw Failure(reason: "cannot replace '\(token)' in a \(parent.typeName)")
            }
        }
    }

    // MARK: - JSON

    /// The patch as RFC 6902 writes it: an array of `{"op", "path", …}`.
    public var json: JSONValue {
        .array(
            operations.map { operation in
                switch operation {
                case .add(let path, let value): ["op": "add", "path": .string(path), "value": value]
                case .remove(let path): ["op": "remove", "path": .string(path)]
                case .replace(let path, let value): ["op": "replace", "path": .string(path), "value": value]
                case .move(let from, let path): ["op": "move", "from": .string(from), "path": .string(path)]
                case .copy(let from, let path): ["op": "copy", "from": .string(from), "path": .string(path)]
                case .test(let path, let value): ["op": "test", "path": .string(path), "value": value]
                }
            })
    }

    /// Decodes what `json` writes (and any RFC 6902 patch).
    ///
    /// - Throws: `WireDecodingError` naming the first operation that is malformed.
    public init(json: JSONValue) throws(WireDecodingError) {
        guard case .array(let items) = json else { throw WireDecodingError(pointer: "", reason: "expected an array") }
        var operations: [Operation] = []
        for (index, item) in items.enumerated() {
            let fields = try JSONObjectReader(item, at: "/\(index)")
            let path = try fields.string("path")
            switch try fields.string("op") {
            case "add": operations.append(.add(path: path, value: try fields.value("value")))
            case "remove": operations.append(.remove(path: path))
            case "replace": operations.append(.replace(path: path, value: try fields.value("value")))
            case "move": operations.append(.move(from: try fields.string("from"), path: path))
            case "copy": operations.append(.copy(from: try fields.string("from"), path: path))
            case "test": operations.append(.test(path: path, value: try fields.value("value")))
            case let other:
                throw WireDecodingError(pointer: fields.at("op"), reason: "unknown operation '\(other)'")
            }
        }
        self.init(operations)
    }
}

/// A JSON Patch that does not apply: which operation (its index) and why.
public struct JSONPatchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The index of the operation that failed.
    public var operation: Int
    public var reason: String

    public init(operation: Int, reason: String) {
        self.operation = operation
        self.reason = reason
    }

    public var description: String { "operation \(operation): \(reason)" }
}
