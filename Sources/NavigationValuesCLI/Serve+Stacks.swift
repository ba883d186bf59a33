import NavigationValuesSessions

// The limits of several stacks per session (docs/Stacks.md, Limits); their flags are declared in `Serve`.

extension Serve {
    /// Reads `--max-stacks`, `--max-presentation-depth` and `--max-batch-operations`.
    /// - Throws: `UsageError` naming the flag (or variable) and its range.
    static func readStackLimits(_ arguments: ParsedArguments, into limits: inout SessionLimits) throws(UsageError) {
        if let count = try arguments.integer("max-stacks", in: 1...10_000) { limits.maxStacks = count }
        if let depth = try arguments.integer("max-presentation-depth", in: 0...1_000) {
            limits.maxPresentationDepth = depth
        }
        if let count = try arguments.integer("max-batch-operations", in: 1...10_000) {
            limits.maxBatchOperations = count
        }
    }
}
