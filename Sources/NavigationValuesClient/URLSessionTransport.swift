import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The transport over `URLSession`: requests through one session, event streams through another
/// whose delegate hands each task's bytes to its stream as they arrive (`URLSession.bytes(for:)`
/// does not exist in FoundationNetworking, Linux; delegate callbacks work on every platform).
public final class URLSessionTransport: ClientTransport {
    private let session: URLSession
    private let streamSession: URLSession
    private let delegate: StreamDelegate

    /// A transport keeping at most `maxConnectionsPerHost` connections open to a server for
    /// requests (event streams have one each). Each request's own `timeout` applies; the two
    /// durations are the sessions' defaults beside it (answers, and silence on a stream).
    public init(
        maxConnectionsPerHost: Int = 8, requestTimeout: Duration = .seconds(30),
        streamIdleTimeout: Duration = .seconds(45)
    ) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = requestTimeout.seconds
        configuration.httpMaximumConnectionsPerHost = maxConnectionsPerHost
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
        let streamConfiguration = URLSessionConfiguration.ephemeral
        streamConfiguration.timeoutIntervalForRequest = streamIdleTimeout.seconds
        streamConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        streamConfiguration.urlCache = nil
        delegate = StreamDelegate()
        streamSession = URLSession(configuration: streamConfiguration, delegate: delegate, delegateQueue: nil)
    }

    deinit {
        session.finishTasksAndInvalidate()
        streamSession.invalidateAndCancel()
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let (data, response) = try await session.data(for: Self.urlRequest(request))
        guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
        return TransportResponse(status: http.statusCode, headers: Self.headers(of: http), body: data)
    }

    public func openStream(_ request: TransportRequest, into stream: TransportStream) {
        let task = streamSession.dataTask(with: Self.urlRequest(request))
        delegate.register(stream, for: task.taskIdentifier)
        stream.onCancel { task.cancel() }
        task.resume()
    }

    /// `request` as a `URLRequest`: its URL, method, headers, body and timeout (for a stream, an
    /// inactivity timeout: no byte for that long ends it).
    static func urlRequest(_ request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body
        urlRequest.timeoutInterval = request.timeout.seconds
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        return urlRequest
    }

    static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return headers
    }
}

/// Routes each streaming task's callbacks to its stream.
private final class StreamDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let streams = Mutex<[Int: TransportStream]>([:])

    func register(_ stream: TransportStream, for task: Int) {
        streams.withLock { $0[task] = stream }
    }

    private func stream(_ task: URLSessionTask) -> TransportStream? {
        streams.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse {
            stream(dataTask)?.receive(status: http.statusCode, headers: URLSessionTransport.headers(of: http))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        stream(dataTask)?.receive(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let stream = streams.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        stream?.finish(error.map { $0 as? URLError ?? URLError(.networkConnectionLost) })
    }
}
