import NavigationValuesCrypto
import NavigationValuesWire
import Synchronization

/// The rendered JSON of loaded sessions, readable without entering their actors, so that
/// `GET /v1/sessions/{id}` can be answered on the connection's own thread.
///
/// Exact by construction, never a guess:
/// - Only a session's actor fills its entry, from inside a read (its turnstile held, the session
///   loaded and the credential checked), with the bytes that read answers.
/// - The entry goes before anything can change the session: when a command enters the actor
///   (before it is applied or committed, so no answer to a mutation is ever followed by a cached
///   read of the version before it), whenever the actor drops or replaces its live copy (failed
///   commit, purge, reload), and when the service unloads the actor (least recently used, idle,
///   or gone). An entry therefore exists only for a session held in memory, which bounds the
///   cache by `ServiceConfiguration.maxLoadedSessions`.
/// - A hit needs the admin token or the session's own token exactly as the actor last verified
///   it (compared in constant time); any other credential (another token, an observer token, a
///   ticket, none) misses, and the read takes the actor as before, with its own answers and
///   errors.
/// - There is none on a shared store (PostgreSQL): there another instance may move a session
///   on, and reads check the stored version first.
final class SessionReadCache: Sendable {
    struct Entry: Sendable {
        var rendered: RenderedSession
        /// The session's token as the actor last verified it against the stored hash; nil when
        /// no token has been verified since the live copy was loaded.
        var verifiedToken: String?
        /// The actor that filled the entry: a hit counts as a use of it (least recently used
        /// unloading, retention's idle check), as a read through it would. Weak: the actor holds
        /// the service's environment, which holds this cache.
        weak var actor: SessionActor?
    }

    private final class Shard: Sendable {
        let entries = Mutex<[SessionID: Entry]>([:])
    }

    private let shards: [Shard] = (0..<16).map { _ in Shard() }
    private let hitCount = Atomic<Int>(0)

    /// Reads answered from an entry, since the start.
    var hits: Int { hitCount.load(ordering: .relaxed) }

    private func shard(_ id: SessionID) -> Shard {
        var hasher = Hasher()
        hasher.combine(id)
        return shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
    }

    /// Called by the session's actor, inside a read at the version `rendered` shows.
    func fill(_ id: SessionID, rendered: RenderedSession, verifiedToken: String?, actor: SessionActor) {
        shard(id).entries.withLock { entries in
            entries[id] = Entry(rendered: rendered, verifiedToken: verifiedToken, actor: actor)
        }
    }

    /// Drops the session's entry: it is about to change, or leaves memory.
    func remove(_ id: SessionID) {
        shard(id).entries.withLock { entries in _ = entries.removeValue(forKey: id) }
    }

    /// The entry when `credential` may read it without the actor: the admin, or the token the
    /// actor verified.
    func entry(_ id: SessionID, credential: Credential) -> Entry? {
        let found = shard(id).entries.withLock { entries -> Entry? in
            guard let entry = entries[id] else { return nil }
            switch credential {
            case .admin:
                return entry
            case .token(let token):
                guard let verified = entry.verifiedToken, constantTimeEquals(token, verified) else { return nil }
                return entry
            case .reader, .device, .none:
                return nil
            }
        }
        if found != nil { hitCount.add(1, ordering: .relaxed) }
        return found
    }

    /// Entries held now.
    var count: Int { shards.reduce(0) { total, shard in total + shard.entries.withLock { $0.count } } }
}
