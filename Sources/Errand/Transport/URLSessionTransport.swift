import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The default ``Transport``: one `URLSession`, shared by every request of an agent so that
/// keep-alive connections are reused.
///
/// The session has a delegate that answers authentication challenges itself: on Linux, a
/// `401` with `WWW-Authenticate: Basic` otherwise hangs forever. Credentials are sent as an
/// `Authorization` header by the request, so the challenge is declined and the 401 delivered.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let router: SessionEventRouter

    /// Creates a transport whose session uses `configuration`.
    public init(configuration: URLSessionConfiguration = .default) {
        let router = SessionEventRouter()
        self.router = router
        #if canImport(FoundationNetworking)
            // 256 chunks of up to 16 KiB: about 4 MiB. Bursts of other events — a thousand
            // cancellations at once — stay under it, so they are never held up.
            let delegateQueue: OperationQueue? = BoundedDelegateQueue(limit: 256)
        #else
            let delegateQueue: OperationQueue? = nil
        #endif
        self.session = URLSession(configuration: configuration, delegate: router, delegateQueue: delegateQueue)
    }

    deinit {
        // The session retains its delegate until invalidated.
        session.invalidateAndCancel()
    }

    /// Starts `request`; see ``Transport/send(_:events:)``.
    public func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportTask
    {
        let urlRequest = Self.urlRequest(for: request)
        // An upload task streams the file from disk; a body in `httpBody` would be read whole.
        let task =
            request.bodyFileURL.map { session.uploadTask(with: urlRequest, fromFile: $0) }
            ?? session.dataTask(with: urlRequest)
        router.register(
            task, idleTimeout: request.timeoutInterval, deadline: request.timeoutIntervalForResource, events: events)
        task.resume()
        return SessionTask(task: task)
    }

    private static func urlRequest(for request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url, timeoutInterval: request.timeoutInterval)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        urlRequest.httpBody = request.body
        return urlRequest
    }

    private struct SessionTask: TransportTask {
        let task: URLSessionTask
        func cancel() { task.cancel() }
    }
}
