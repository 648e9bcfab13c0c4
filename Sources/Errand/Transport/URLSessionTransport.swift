import Dispatch
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
///
/// Releasing the transport invalidates its session once the requests in flight have finished.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let router: SessionEventRouter
    /// Creates, resumes and cancels the session's tasks. On Linux each of those waits for the
    /// session's internal queue, which a busy transfer keeps occupied; callers — often threads
    /// of the Swift concurrency pool — must not wait with it.
    private let control = DispatchQueue(label: "Errand.URLSessionTransport.control")

    /// Creates a transport whose session uses `configuration`.
    public init(configuration: URLSessionConfiguration = .default) {
        #if canImport(FoundationNetworking)
            // 256 chunks of up to 16 KiB: about 4 MiB. Bursts of other events — a thousand
            // cancellations at once — stay under it, so they are never held up.
            let delegateQueue: OperationQueue = BoundedDelegateQueue(limit: 256)
        #else
            let delegateQueue = OperationQueue()
            delegateQueue.maxConcurrentOperationCount = 1
        #endif
        let router = SessionEventRouter(delegateQueue: delegateQueue)
        self.router = router
        self.session = URLSession(
            configuration: Self.withoutURLCache(configuration), delegate: router, delegateQueue: delegateQueue)
    }

    deinit {
        // The session retains its delegate until invalidated. No request is in flight here: each
        // one's events closure keeps the agent, and so this transport, alive until it completes.
        // `finishTasksAndInvalidate` rather than `invalidateAndCancel`, which on Linux walks the
        // session's task registry off the session's queue while finished tasks are still being
        // removed from it — a data race that can crash the process. On the control queue, after
        // the starts still queued: a task created on an invalidated session is a fatal error.
        control.async { [session] in session.finishTasksAndInvalidate() }
    }

    /// Starts `request`; see ``Transport/send(_:events:)``.
    ///
    /// Returns at once: the session's task is created and resumed on the transport's own queue.
    public func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportTask
    {
        let handle = SessionTask(control: control, router: router)
        control.async { [session, router] in
            guard !handle.isCancelled else { return events(.completed(.cancelled)) }
            let urlRequest = Self.urlRequest(for: request)
            // An upload task streams the file from disk; a body in `httpBody` would be read whole.
            let task =
                request.bodyFileURL.map { session.uploadTask(with: urlRequest, fromFile: $0) }
                ?? session.dataTask(with: urlRequest)
            router.register(
                task, idleTimeout: request.timeoutInterval, deadline: request.timeoutIntervalForResource,
                events: events)
            task.resume()
            handle.attach(task)
        }
        return handle
    }

    /// A copy of `configuration` without a `URLCache`. Errand caches responses itself, and on
    /// Linux a session with a URL cache creates each task's protocol only after an asynchronous
    /// cache lookup, which defers a cancel's work past the task's completion — the crash
    /// ``SessionEventRouter/cancel(_:timedOut:)`` guards against.
    private static func withoutURLCache(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        guard let copy = configuration.copy() as? URLSessionConfiguration else { return configuration }
        copy.urlCache = nil
        return copy
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

    /// A request that may not have a session task yet: a cancel before the task exists stops
    /// it from being created, and one after cancels it through the router.
    private final class SessionTask: TransportTask {
        private struct State {
            var isCancelled = false
            var task: URLSessionTask?
        }

        private let control: DispatchQueue
        private let router: SessionEventRouter
        private let state = Locked(State())

        init(control: DispatchQueue, router: SessionEventRouter) {
            self.control = control
            self.router = router
        }

        var isCancelled: Bool { state[\.isCancelled] }

        /// Called on the control queue once the task is resumed; a cancel that came meanwhile applies now.
        func attach(_ task: URLSessionTask) {
            let cancelled = state.withLock { state in
                state.task = task
                return state.isCancelled
            }
            if cancelled { router.cancel(task) }
        }

        func cancel() {
            let task = state.withLock { state -> URLSessionTask? in
                guard !state.isCancelled else { return nil }
                state.isCancelled = true
                return state.task
            }
            guard let task else { return }
            control.async { [router] in router.cancel(task) }
        }
    }
}
