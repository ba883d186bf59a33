import Foundation
import NavigationValuesSessions
import NavigationValuesStore
import NavigationValuesWire
import Synchronization

/// The server's figures for `GET /metrics`, in the Prometheus text format (version 0.0.4).
///
/// Requests are counted here, by method, route pattern (never the raw path, so labels stay few)
/// and status; the other figures are read from their owners when the exposition is rendered, the
/// process's own (`process_…`) from `/proc`:
///
/// ```swift
/// metrics.recordRequest(method: "GET", route: "/v1/sessions/{id}", status: 200, duration: 0.000_4)
/// let text = metrics.exposition(Metrics.Figures(loadedSessions: 3), store: store.metrics)
/// ```
public final class Metrics: Sendable {
    /// The figures of other components, as they are now.
    public struct Figures: Sendable {
        /// Sessions whose state is held in memory.
        public var loadedSessions = 0
        /// Of those, sessions held in their full form (the rest are compact).
        public var hotSessions = 0
        /// Events committed (and published to subscribers) since start.
        public var eventsAppended = 0
        /// Event-stream subscribers connected now.
        public var subscribers = 0
        /// Subscribers dropped for falling behind, since start.
        public var droppedSubscribers = 0
        /// Loaded sessions whose rendered JSON is cached for reads without their actor.
        public var cachedSessions = 0
        /// Session reads answered from that cache, since start.
        public var cachedReads = 0

        public init(
            loadedSessions: Int = 0, eventsAppended: Int = 0, subscribers: Int = 0, droppedSubscribers: Int = 0,
            cachedSessions: Int = 0, cachedReads: Int = 0, hotSessions: Int = 0
        ) {
            self.loadedSessions = loadedSessions
            self.hotSessions = hotSessions
            self.eventsAppended = eventsAppended
            self.subscribers = subscribers
            self.droppedSubscribers = droppedSubscribers
            self.cachedSessions = cachedSessions
            self.cachedReads = cachedReads
        }
    }

    /// Upper bounds, in seconds, of the request-latency histogram's buckets (Prometheus `le`).
    public static let latencyBucketBounds: [Double] = [
        0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    private struct RouteKey: Hashable, Comparable {
        var method: String
        var route: String

        static func < (lhs: RouteKey, rhs: RouteKey) -> Bool { (lhs.route, lhs.method) < (rhs.route, rhs.method) }

        /// Hashes the two labels' lengths, the route's last byte and the method's first, not every
        /// byte: there are a few dozen keys, and the lookup of every request hashed both strings
        /// whole. Keys that agree on these are told apart by `==`, which for the router's own
        /// pattern (the same string each time) compares no bytes.
        func hash(into hasher: inout Hasher) {
            hasher.combine(route.utf8.count &<< 8 | method.utf8.count)
            hasher.combine(UInt16(route.utf8.last ?? 0) &<< 8 | UInt16(method.utf8.first ?? 0))
        }
    }

    private struct Latency {
        var buckets = [Int](repeating: 0, count: Metrics.latencyBucketBounds.count)
        var count = 0
        var sum: Double = 0

        mutating func record(_ duration: Double) {
            count += 1
            sum += duration
            for (index, bound) in Metrics.latencyBucketBounds.enumerated() where duration <= bound {
                buckets[index] += 1
            }
        }
    }

    /// One route's figures, changed in place (one lookup, no copy) for each request.
    private struct RouteFigures {
        /// Requests by status, in the order the statuses first came: a route answers a handful,
        /// so a scan finds one sooner than a hash would.
        var counts: [(status: Int, count: Int)] = []
        var latency = Latency()

        mutating func record(status: Int, duration: Double) {
            if let index = counts.firstIndex(where: { $0.status == status }) {
                counts[index].count += 1
            } else {
                counts.append((status, 1))
            }
            latency.record(duration)
        }

        func count(of status: Int) -> Int {
            counts.first { $0.status == status }?.count ?? 0
        }
    }

    private struct Requests {
        var routes: [RouteKey: RouteFigures] = [:]
    }

    private let requests = Mutex(Requests())
    /// TLS handshakes that failed since start (HTTPS only).
    private let tlsHandshakeFailures = Atomic<Int>(0)
    /// Whose dropped lines are reported (`navigation_values_log_lines_dropped_total`).
    private let logWriter: LogWriter?

    /// Creates empty figures; `logWriter`'s dropped lines are reported with them.
    public init(logWriter: LogWriter? = nil) {
        self.logWriter = logWriter
    }

    /// The methods that get a label of their own; any other is counted as `OTHER`, so that a
    /// client cannot add a time series by inventing a method (RFC 9110 lets a method be any token).
    public static let labelledMethods = Set(labelledMethodsInOrder)

    /// ``labelledMethods``, the most frequent first: `methodLabel(_:)` compares a request's method
    /// with each (short strings, compared without hashing) rather than hashing it into the set.
    private static let labelledMethodsInOrder = [
        "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE",
    ]

    /// The `method` label of a request method: itself when it is one of ``labelledMethods``, else `OTHER`.
    public static func methodLabel(_ method: String) -> String {
        for labelled in labelledMethodsInOrder where labelled == method { return method }
        return "OTHER"
    }

    /// Counts one answered request and its latency in seconds. `method` is labelled through
    /// ``methodLabel(_:)``; `route` must be a route pattern (or `unmatched`), never a raw path.
    public func recordRequest(method: String, route: String, status: Int, duration: Double) {
        let key = RouteKey(method: Self.methodLabel(method), route: route)
        requests.withLock { requests in
            requests.routes[key, default: RouteFigures()].record(status: status, duration: duration)
        }
    }

    /// Counts one failed TLS handshake (a client refusing the certificate, speaking plain HTTP or
    /// an old protocol, or too slow).
    public func recordTLSHandshakeFailure() {
        tlsHandshakeFailures.add(1, ordering: .relaxed)
    }

    /// How many requests were answered with `status` on `method` `route` so far.
    public func requestCount(method: String, route: String, status: Int) -> Int {
        requests.withLock { $0.routes[RouteKey(method: Self.methodLabel(method), route: route)]?.count(of: status) ?? 0 }
    }

    // MARK: - Rendering

    /// The whole exposition: the request figures, `figures`, and the store's.
    public func exposition(_ figures: Figures, store: StoreMetrics) -> String {
        var out = ""
        let snapshot = requests.withLock { $0 }
        header(
            &out, "navigation_values_http_requests_total", "counter",
            "HTTP requests answered, by route pattern and status.")
        for key in snapshot.routes.keys.sorted() {
            for (status, count) in (snapshot.routes[key]?.counts ?? []).sorted(by: { $0.status < $1.status }) {
                out += "navigation_values_http_requests_total{method=\(quoted(key.method)),route=\(quoted(key.route)),"
                out += "status=\"\(status)\"} \(count)\n"
            }
        }
        header(
            &out, "navigation_values_http_request_duration_seconds", "histogram",
            "Time from a request's head being read to its response head being ready.")
        for key in snapshot.routes.keys.sorted() {
            guard let latency = snapshot.routes[key]?.latency else { continue }
            let labels = "method=\(quoted(key.method)),route=\(quoted(key.route))"
            histogram(
                &out, "navigation_values_http_request_duration_seconds", labels: labels,
                bounds: Self.latencyBucketBounds, buckets: latency.buckets, count: latency.count, sum: latency.sum)
        }
        header(&out, "navigation_values_sessions_loaded", "gauge", "Sessions whose state is held in memory.")
        out += "navigation_values_sessions_loaded \(figures.loadedSessions)\n"
        header(
            &out, "navigation_values_sessions_hot", "gauge",
            "Loaded sessions held in their full form; the others are kept compact until their next request.")
        out += "navigation_values_sessions_hot \(figures.hotSessions)\n"
        header(
            &out, "navigation_values_sessions_read_cached", "gauge",
            "Loaded sessions whose rendered JSON answers GET /v1/sessions/{id} without their actor.")
        out += "navigation_values_sessions_read_cached \(figures.cachedSessions)\n"
        header(
            &out, "navigation_values_session_reads_cached_total", "counter",
            "GET /v1/sessions/{id} answered from that cache.")
        out += "navigation_values_session_reads_cached_total \(figures.cachedReads)\n"
        header(&out, "navigation_values_events_appended_total", "counter", "Events committed to the database.")
        out += "navigation_values_events_appended_total \(figures.eventsAppended)\n"
        header(&out, "navigation_values_subscribers", "gauge", "Event-stream subscribers connected.")
        out += "navigation_values_subscribers \(figures.subscribers)\n"
        header(&out, "navigation_values_subscribers_dropped_total", "counter", "Event-stream subscribers cut off.")
        out += "navigation_values_subscribers_dropped_total \(figures.droppedSubscribers)\n"
        header(
            &out, "navigation_values_log_lines_dropped_total", "counter",
            "Log lines dropped because the log writer fell behind (--log-buffer-bytes).")
        out += "navigation_values_log_lines_dropped_total \(logWriter?.droppedLines ?? 0)\n"
        header(
            &out, "navigation_values_tls_handshake_failures_total", "counter",
            "TLS handshakes that failed: refused certificate, plain HTTP, old protocol, timeout (HTTPS only).")
        out += "navigation_values_tls_handshake_failures_total \(tlsHandshakeFailures.load(ordering: .relaxed))\n"
        storeExposition(&out, store)
        header(&out, "navigation_values_build_info", "gauge", "The running build: its version, in the label; always 1.")
        out += "navigation_values_build_info{version=\(quoted(NavigationValuesVersion.current))} 1\n"
        if let process = ProcessMetrics.read() { processExposition(&out, process) }
        return out
    }

    /// The process's figures under the names Prometheus's client libraries give them, so that
    /// dashboards made for any exporter read them.
    private func processExposition(_ out: inout String, _ process: ProcessMetrics) {
        let samples: [(name: String, type: String, help: String, value: String?)] = [
            (
                "process_cpu_seconds_total", "counter", "User and system CPU time spent, in seconds.",
                number(process.cpuSeconds)
            ),
            ("process_open_fds", "gauge", "Open file descriptors.", "\(process.openFileDescriptors)"),
            (
                "process_max_fds", "gauge", "The most file descriptors the process may open.",
                process.maxFileDescriptors.map { "\($0)" }
            ),
            (
                "process_resident_memory_bytes", "gauge", "Resident memory size, in bytes.",
                "\(process.residentMemoryBytes)"
            ),
            (
                "process_virtual_memory_bytes", "gauge", "Virtual memory size, in bytes.",
                "\(process.virtualMemoryBytes)"
            ),
            (
                "process_start_time_seconds", "gauge", "When the process started, in seconds since the Unix epoch.",
                number(process.startTimeSeconds)
            ),
        ]
        for sample in samples {
            guard let value = sample.value else { continue }  // no limit: no sample
            header(&out, sample.name, sample.type, sample.help)
            out += "\(sample.name) \(value)\n"
        }
    }

    private func storeExposition(_ out: inout String, _ store: StoreMetrics) {
        header(
            &out, "navigation_values_store_commit_duration_seconds", "histogram",
            "Time from a mutation's commit being asked for to its acknowledgement.")
        histogram(
            &out, "navigation_values_store_commit_duration_seconds", labels: "",
            bounds: StoreMetrics.latencyBucketBounds, buckets: store.commitLatencyBuckets,
            count: store.committedMutations + store.failedMutations, sum: store.commitLatencySum)
        header(&out, "navigation_values_store_commits_total", "counter", "Mutations committed or failed.")
        out += "navigation_values_store_commits_total{result=\"committed\"} \(store.committedMutations)\n"
        out += "navigation_values_store_commits_total{result=\"failed\"} \(store.failedMutations)\n"
        header(
            &out, "navigation_values_store_conflicts_total", "counter",
            "Commits refused as conflicts: another writer moved the session on first, or a key was taken.")
        out += "navigation_values_store_conflicts_total \(store.conflicts)\n"
        header(
            &out, "navigation_values_store_turns_total", "counter",
            "Writes that met a conflict and waited their turn on the session in the database.")
        out += "navigation_values_store_turns_total \(store.turns)\n"
        header(
            &out, "navigation_values_store_turn_wait_seconds_total", "counter",
            "Time those writes waited for their turn.")
        out += "navigation_values_store_turn_wait_seconds_total \(number(store.turnWaitSeconds))\n"
        header(
            &out, "navigation_values_store_batch_size", "summary",
            "Mutations per group-commit transaction (sum: mutations, count: transactions).")
        out += "navigation_values_store_batch_size_sum \(store.batchedMutations)\n"
        out += "navigation_values_store_batch_size_count \(store.batches)\n"
        header(&out, "navigation_values_store_batch_size_max", "gauge", "Mutations in the largest transaction so far.")
        out += "navigation_values_store_batch_size_max \(store.largestBatch)\n"
        header(
            &out, "navigation_values_store_batch_duration_seconds", "summary",
            "Time inside group-commit transactions, BEGIN to COMMIT.")
        out += "navigation_values_store_batch_duration_seconds_sum \(number(store.batchDurationSum))\n"
        out += "navigation_values_store_batch_duration_seconds_count \(store.batches)\n"
        header(
            &out, "navigation_values_store_pages_written_total", "counter",
            "Database pages written by commits (SQLite: WAL frames; 0 on PostgreSQL).")
        out += "navigation_values_store_pages_written_total \(store.pagesWritten)\n"
        writeBehindExposition(&out, store)
        checkpointExposition(&out, store)
    }

    /// Log-first commits: how far the state rows are behind the log, and their writes.
    private func writeBehindExposition(_ out: inout String, _ store: StoreMetrics) {
        header(
            &out, "navigation_values_store_state_lag_events", "gauge",
            "Committed events whose state rows are not yet written behind the log (log-first commits).")
        out += "navigation_values_store_state_lag_events \(store.stateLagEvents)\n"
        header(
            &out, "navigation_values_store_state_lag_sessions", "gauge", "Sessions those events belong to.")
        out += "navigation_values_store_state_lag_sessions \(store.stateLagSessions)\n"
        header(
            &out, "navigation_values_store_state_lag_seconds", "gauge",
            "How long the oldest of those events has waited for its state rows.")
        out += "navigation_values_store_state_lag_seconds \(number(store.stateLagSeconds))\n"
        header(
            &out, "navigation_values_store_state_writes_total", "counter",
            "Transactions that wrote state rows behind the log.")
        out += "navigation_values_store_state_writes_total \(store.stateWrites)\n"
        header(
            &out, "navigation_values_store_state_write_sessions_total", "counter",
            "Sessions those transactions wrote, by result (a failed one is caught up by replaying its log).")
        out += "navigation_values_store_state_write_sessions_total{result=\"written\"} "
        out += "\(store.stateWriteSessions - store.stateWriteFailures)\n"
        out += "navigation_values_store_state_write_sessions_total{result=\"failed\"} \(store.stateWriteFailures)\n"
        header(
            &out, "navigation_values_store_state_write_events_total", "counter",
            "Events whose state rows were written behind the log (coalesced per session).")
        out += "navigation_values_store_state_write_events_total \(store.stateWriteEvents)\n"
        header(
            &out, "navigation_values_store_state_catch_ups_total", "counter",
            "Sessions read with their state rows behind their log and nothing held to write (a killed process): replayed.")
        out += "navigation_values_store_state_catch_ups_total \(store.stateCatchUps)\n"
    }

    private func checkpointExposition(_ out: inout String, _ store: StoreMetrics) {
        header(
            &out, "navigation_values_store_checkpoints_total", "counter",
            "Checkpoints of the write-ahead log (SQLite) by who ran them and result: passive ones on the checkpointer's thread, the writer's between batches, forced ones past the hard limit."
        )
        let rows: [(String, String, Int)] = [
            ("passive", "complete", store.checkpoints - store.partialCheckpoints),
            ("passive", "partial", store.partialCheckpoints),
            ("passive", "failed", store.failedCheckpoints),
            ("writer", "complete", store.writerCheckpoints - store.partialWriterCheckpoints),
            ("writer", "partial", store.partialWriterCheckpoints),
            ("writer", "failed", store.failedWriterCheckpoints),
            ("restart", "complete", store.forcedCheckpoints),
            ("restart", "busy", store.busyForcedCheckpoints),
            ("restart", "failed", store.failedForcedCheckpoints),
        ]
        for (mode, result, count) in rows {
            out += "navigation_values_store_checkpoints_total{mode=\"\(mode)\",result=\"\(result)\"} \(count)\n"
        }
        header(
            &out, "navigation_values_store_wal_restarts_total", "counter",
            "Times the write-ahead log restarted from its beginning after a checkpoint copied all of it (SQLite).")
        out += "navigation_values_store_wal_restarts_total \(store.walRestarts)\n"
        header(
            &out, "navigation_values_store_pages_checkpointed_total", "counter",
            "Pages copied from the write-ahead log into the database file.")
        out += "navigation_values_store_pages_checkpointed_total \(store.pagesCheckpointed)\n"
        header(
            &out, "navigation_values_store_wal_pages", "gauge", "Frames in the write-ahead log after the latest commit."
        )
        out += "navigation_values_store_wal_pages \(store.walPages)\n"
        header(&out, "navigation_values_store_wal_bytes", "gauge", "Size of the write-ahead-log file in bytes.")
        out += "navigation_values_store_wal_bytes \(store.walBytes)\n"
        header(
            &out, "navigation_values_store_thread_cpu_seconds_total", "counter",
            "CPU time of the store's threads: the writer while it runs batches, the checkpointer (SQLite) while it checkpoints."
        )
        out += "navigation_values_store_thread_cpu_seconds_total{thread=\"writer\"} \(number(store.writerCPUSeconds))\n"
        out += "navigation_values_store_thread_cpu_seconds_total{thread=\"checkpointer\"} "
        out += "\(number(store.checkpointerCPUSeconds))\n"
        header(
            &out, "navigation_values_store_writer_checkpoint_cpu_seconds_total", "counter",
            "Of the writer's CPU time, its checkpoints between batches (SQLite).")
        out +=
            "navigation_values_store_writer_checkpoint_cpu_seconds_total \(number(store.writerCheckpointCPUSeconds))\n"
        header(
            &out, "navigation_values_store_writer_checkpoint_seconds_total", "counter",
            "Wall time of the writer's checkpoints between batches, which queued commits wait for (SQLite).")
        out += "navigation_values_store_writer_checkpoint_seconds_total \(number(store.writerCheckpointSeconds))\n"
        header(
            &out, "navigation_values_store_writer_checkpoint_pages_total", "counter",
            "Pages the writer's checkpoints between batches copied into the database file (SQLite).")
        out += "navigation_values_store_writer_checkpoint_pages_total \(store.writerCheckpointPages)\n"
    }

    private func header(_ out: inout String, _ name: String, _ type: String, _ help: String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
    }

    private func histogram(
        _ out: inout String, _ name: String, labels: String, bounds: [Double], buckets: [Int], count: Int, sum: Double
    ) {
        let prefix = labels.isEmpty ? "" : labels + ","
        for (bound, bucket) in zip(bounds, buckets) {
            out += "\(name)_bucket{\(prefix)le=\"\(number(bound))\"} \(bucket)\n"
        }
        out += "\(name)_bucket{\(prefix)le=\"+Inf\"} \(count)\n"
        let suffix = labels.isEmpty ? "" : "{\(labels)}"
        out += "\(name)_sum\(suffix) \(number(sum))\n"
        out += "\(name)_count\(suffix) \(count)\n"
    }

    /// A label value, escaped as the text format asks (backslash, quote, newline).
    private func quoted(_ value: String) -> String {
        let escaped = value.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
        return "\"\(escaped)\""
    }

    private func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : "\(value)"
    }
}
