import NavigationValues
import NavigationValuesStore
import NavigationValuesWire

extension SessionReplay {
    /// Session `id`'s history through `version` as a Swift Testing test (`SwiftTestingSource`): each
    /// event, replayed here as replay applies it (`LiveSession.apply`), becomes a step of the test;
    /// after each version in `versions` (every one when nil) the test checks the session as this
    /// replay has it then, which is what `GET …/replay?at=` answers. Events are read a page at a
    /// time (`pageBytes`); the source may be at most `maxBytes`.
    ///
    /// - Throws: `SessionError.limitExceeded` (`max-test-export-bytes`) past `maxBytes`;
    ///   `CorruptSessionError` when the stored history does not replay; `StoreError`.
    package static func swiftTest(
        of id: SessionID, through version: Int64, checking versions: Set<Int64>?, in store: any SessionStore,
        maxBytes: Int, pageBytes: Int
    ) async throws -> String {
        func corrupt(_ reason: String) -> CorruptSessionError { CorruptSessionError(session: id, reason: reason) }
        var source = SwiftTestingSource(session: id, maxBytes: maxBytes)
        var session: LiveSession?
        var position: Int64 = 0
        while position < version {
            let page = try await store.eventPage(
                of: id, after: position, limit: Int(min(1_000, version - position)), maxBytes: pageBytes
            ).events
            guard let first = page.first, first.seq == position + 1 else {
                throw corrupt("event \(position + 1) is missing")
            }
            for stored in page where stored.seq <= version {
                guard stored.seq == position + 1 else { throw corrupt("event \(position + 1) is missing") }
                let recorded = try decode(stored, session: id)
                if let session {
                    guard let operation = SessionOperation(replaying: recorded.event) else {
                        throw corrupt("event \(stored.seq) (\(recorded.event.kind.rawValue)) is not a change")
                    }
                    _ = try session.apply(operation, seq: stored.seq, at: stored.at)
                } else {
                    guard case .sessionCreated(let root, let schema) = recorded.event else {
                        throw corrupt("event 1 is not session.created")
                    }
                    session = try LiveSession.created(root: root, schema: schema, session: id, at: recorded.at)
                }
                let state = versions.map { $0.contains(stored.seq) } ?? true ? session?.resource() : nil
                do {
                    try source.append(recorded, checking: state)
                } catch is SwiftTestingSource.TooLarge {
                    throw SessionError.limitExceeded(
                        "max-test-export-bytes",
                        "the test of session \(id.rawValue) would pass \(maxBytes) bytes at event \(stored.seq) of \(version); check fewer versions (?versions=) or raise --max-test-export-bytes"
                    )
                } catch let error as SwiftTestingSource.Unreproducible {
                    throw corrupt(error.description)
                }
                position = stored.seq
            }
        }
        do {
            return try source.finished()
        } catch {
            throw corrupt("\(error)")
        }
    }
}
