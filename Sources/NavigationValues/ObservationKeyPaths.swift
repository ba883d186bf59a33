import Synchronization

/// The key paths through which observation tracks one entry (a key of a context).
///
/// A key path with a subscript argument costs about a microsecond to build, more than the rest of a
/// read. Key paths of typed keys are therefore memoised: there are as many as key types in the
/// program, so the memo is bounded and holds only immutable values. Named keys (the server's, which
/// clients choose) are never memoised, so no client can grow it; the server reads them untracked.
enum ObservationKeyPaths {
    typealias Path = KeyPath<ScreenContext, Int>

    private static let typedValuePaths = Mutex<[ObjectIdentifier: Path]>([:])
    private static let typedPreferencePaths = Mutex<[ObjectIdentifier: Path]>([:])

    static func value(_ id: EntryID) -> Path {
        guard case .type(let type) = id else { return \ScreenContext.[observedValue: id] }
        return typedValuePaths.withLock { paths in
            if let path = paths[type] { return path }
            let path = \ScreenContext.[observedValue: id]
            paths[type] = path
            return path
        }
    }

    static func preference(_ id: EntryID) -> Path {
        guard case .type(let type) = id else { return \ScreenContext.[observedPreference: id] }
        return typedPreferencePaths.withLock { paths in
            if let path = paths[type] { return path }
            let path = \ScreenContext.[observedPreference: id]
            paths[type] = path
            return path
        }
    }
}
