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
/// On Linux, FoundationNetworking — URLSession there — ends the process on answers any server, or
/// the network between, can give: a chunked body with trailer fields, a head cut off by a closed
/// connection, a `Content-Length` near 2^63, a redirect to a protocol-relative IPv6 address. So
/// there every request goes through a ``CurlTransport`` of this transport's own instead, created
/// at the first with the same configuration (cookies, additional header fields, connections per
/// host), connection options and server trust. It survives those answers, pauses a
/// ``ResponseStream`` whose reader falls behind, sends a body produced while it is sent
/// (``TransportRequest/bodyStream``) as it comes, opens WebSockets, and reports libcurl's full
/// ``TransportEvent/metrics(_:)``.
///
/// A request stays on the session only where libcurl cannot be loaded, where one of the
/// configuration's own `protocolClasses` (not FoundationNetworking's) takes it — a stub or a
/// cache, which libcurl would bypass — and to a host with pinned keys, which is refused (see
/// ``serverTrust``). There a stream is not paused, only what can be seen from outside
/// FoundationNetworking is measured (first byte, total, redirects), and a streamed body fails at
/// once with `URLError(.unsupportedURL)` saying why: FoundationNetworking would end it as soon as
/// no bytes are ready, and waiting for them would hold every URLSession of the process, which all
/// run on one queue. What FoundationNetworking itself serves, a hostile answer can still crash.
///
/// On Apple platforms the session sends every request. A stream whose reader falls behind
/// pauses its task, which stops it reading, so memory stays flat for a stream of any length;
/// streamed bodies are not sent yet (`URLError(.unsupportedURL)`). A WebSocket opens as a
/// `URLSessionWebSocketTask`, which never offers permessage-deflate (nothing is compressed)
/// and keeps no body of a refused handshake; ``WebSocketOptions/maximumMessageSize`` applies
/// up to 64 MiB, URLSession's own limit as this transport sets it.
///
/// Of ``ConnectionOptions`` it honours what its session can: connections per host, and the
/// proxy — on Linux only the environment's, which FoundationNetworking's libcurl reads itself; on
/// Apple platforms an explicit proxy without credentials too. Any other option, and `http+unix`
/// URLs, fail each request with an error that names them — but a WebSocket on Linux, which
/// libcurl opens honouring them; ``CurlTransport`` honours them all.
///
/// Releasing the transport invalidates its session once the requests in flight have finished.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let router: SessionEventRouter
    #if canImport(FoundationNetworking)
        /// Which requests go through libcurl on Linux; `nil` where it cannot be loaded.
        private let libcurl: SessionLibcurlRoute?
    #endif
    /// Creates, resumes and cancels the session's tasks. On Linux each of those waits for the
    /// session's internal queue, which a busy transfer keeps occupied; callers — often threads
    /// of the Swift concurrency pool — must not wait with it.
    private let control = DispatchQueue(label: "Errand.URLSessionTransport.control")

    /// Hosts whose requests the transport refuses, because it cannot check their pinned keys.
    /// Default ``ServerTrust/system``: none.
    public let serverTrust: ServerTrust
    /// How the transport connects to servers. Default: ``ConnectionOptions/init()``.
    public let connection: ConnectionOptions
    /// Why no request can honour ``connection``; `nil` when every option can be.
    private let connectionRefusal: ErrandError?

    /// Creates a transport whose session uses `configuration`.
    /// - Parameters:
    ///   - configuration: The session's configuration; its `urlCache` is not used. Default `.default`.
    ///   - connection: How to reach servers. What the session cannot honour fails every request
    ///     with `URLError(.unsupportedURL)` naming the options; see the overview. Default: every
    ///     option's default, which it honours.
    ///   - serverTrust: Hosts with pinned public keys. URLSession offers no way to check them on
    ///     Linux, so requests to those hosts fail with `URLError(.secureConnectionFailed)` rather
    ///     than go out unchecked; use ``CurlTransport`` to pin. Default ``ServerTrust/system``.
    public convenience init(
        configuration: URLSessionConfiguration = .default, connection: ConnectionOptions = .init(),
        serverTrust: ServerTrust = .system
    ) {
        self.init(
            configuration: configuration, connection: connection, serverTrust: serverTrust,
            plainRequestsThroughLibcurl: true)
    }

    /// With `plainRequestsThroughLibcurl` `false`, requests other than streams, streamed bodies
    /// and WebSockets stay on the session on Linux: for tests of the session's own path, which
    /// Apple platforms take.
    init(
        configuration: URLSessionConfiguration, connection: ConnectionOptions, serverTrust: ServerTrust,
        plainRequestsThroughLibcurl: Bool
    ) {
        self.serverTrust = serverTrust
        self.connection = connection
        connectionRefusal = SessionConnectionOptions.refusal(
            of: connection, environment: ProcessInfo.processInfo.environment)
        #if canImport(FoundationNetworking)
            // 256 chunks of up to 16 KiB: about 4 MiB. Bursts of other events — a thousand
            // cancellations at once — stay under it, so they are never held up.
            let delegateQueue: OperationQueue? = BoundedDelegateQueue(limit: 256)
        #else
            let delegateQueue: OperationQueue? = nil
        #endif
        let router = SessionEventRouter()
        self.router = router
        let configuration = Self.withoutURLCache(configuration)
        SessionConnectionOptions.apply(connection, to: configuration)
        self.session = URLSession(configuration: configuration, delegate: router, delegateQueue: delegateQueue)
        #if canImport(FoundationNetworking)
            libcurl = SessionLibcurlRoute(
                configuration: configuration, connection: connection, serverTrust: serverTrust,
                takesPlainRequests: plainRequestsThroughLibcurl)
        #endif
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
    /// Redirects are followed here, not by URLSession, so that a POST keeps its body on 307 and
    /// 308 and credentials never reach another origin. On Linux requests go through libcurl
    /// instead, as the overview says.
    public func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportTask
    {
        #if canImport(FoundationNetworking)
            // libcurl opens it, honouring every connection option the session cannot.
            if request.upgradesToWebSocket, let curl = libcurl?.transport(for: request) {
                return curl.send(request, events: events)
            }
        #endif
        if let refusal = connectionRefusal ?? SessionConnectionOptions.refusal(of: request.url) {
            request.bodyStream?.discard()
            control.async { events(.completed(refusal.naming(request.url))) }
            return SessionTask(control: control, router: router)
        }
        #if canImport(FoundationNetworking)
            if let curl = libcurl?.transport(for: request) {
                return curl.send(request, events: events)
            }
        #endif
        if request.upgradesToWebSocket {
            #if canImport(FoundationNetworking)
                // FoundationNetworking's libcurl has no WebSocket support, and libcurl itself did not load.
                control.async { events(.completed(WebSocketHandshake.unsupported(by: "URLSessionTransport"))) }
                return SessionTask(control: control, router: router)
            #else
                let task = session.webSocketTask(with: SessionWebSocketConnection.urlRequest(for: request))
                return SessionWebSocketConnection(task: task, request: request, events: events)
            #endif
        }
        let handle = SessionTask(control: control, router: router)
        let deadline = request.timeoutIntervalForResource.map { DispatchTime.now() + $0 }
        start(
            SessionRedirectHop(request: request, redirectCount: 0), deadline: deadline, handle: handle, events: events)
        return handle
    }

    /// Sends one exchange of a request, and the next one after a redirect it follows.
    private func start(
        _ hop: SessionRedirectHop, deadline: DispatchTime?, handle: SessionTask,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) {
        control.async { [self] in
            guard !handle.isCancelled else { return events(.completed(.cancelled)) }
            if let refusal = serverTrust.refusal(of: hop.request.url, canCheckPins: false) {
                return events(.completed(refusal))
            }
            let request = hop.request
            if let body = request.bodyStream {
                body.discard()
                return events(.completed(Self.cannotStream(to: request.url)))
            }
            // FoundationNetworking neither reports a body file it cannot read nor ends the task:
            // it would wait out the timeout. Checked here, it fails at once, naming the file.
            if let file = request.bodyFileURL {
                do throws(ErrandError) {
                    _ = try UploadFile.size(of: file)
                } catch {
                    return events(.completed(error))
                }
            }
            var urlRequest = Self.urlRequest(for: request)
            if let cookie = request.jarCookieHeader { urlRequest.setValue(cookie, forHTTPHeaderField: "Cookie") }
            // An upload task streams the file from disk; a body in `httpBody` would be read whole.
            // The rest of a file, from an offset, streams from an input stream moved there.
            let file = request.bodyFileURL.flatMap { request.bodyFileOffset > 0 ? nil : $0 }
            if let rest = request.bodyFileURL, request.bodyFileOffset > 0, let stream = InputStream(url: rest) {
                _ = stream.setProperty(NSNumber(value: request.bodyFileOffset), forKey: .fileCurrentOffsetKey)
                urlRequest.httpBodyStream = stream
            }
            let task =
                file.map { session.uploadTask(with: urlRequest, fromFile: $0) } ?? session.dataTask(with: urlRequest)
            router.register(
                task, idleTimeout: request.timeoutInterval, deadline: deadline, redirectCount: hop.redirectCount
            ) {
                [self] event in
                switch hop.receive(event) {
                case .forward(let event): events(event)
                case .ignore: break
                case .follow(let next):
                    let nextHop = SessionRedirectHop(request: next, redirectCount: hop.redirectCount + 1)
                    start(nextHop, deadline: deadline, handle: handle, events: events)
                case .fail(let error): events(.completed(error))
                }
            }
            task.resume()
            handle.attach(task)
        }
    }

    #if canImport(FoundationNetworking)
        /// The transport requests went through on Linux, once one did.
        var curlTransport: CurlTransport? { libcurl?.madeTransport }
    #endif

    /// The failure of a request with a ``TransportRequest/bodyStream`` that stays on the session,
    /// which fails it rather than send it cut short, stall every session for it, or buffer it whole.
    private static func cannotStream(to url: URL) -> ErrandError {
        #if canImport(FoundationNetworking)
            // Measured with Swift 6.3.1: an input stream without bytes ready ends the body, sent as
            // complete without an error; a read that waits for them holds up the one queue every
            // URLSession of the process runs on; and Stream.getBoundStreams does not exist.
            let reason =
                "URLSessionTransport cannot send a streamed body (UploadBody.stream) through FoundationNetworking,"
                + " which ends it as soon as no bytes are ready, sending it cut short, and waiting for bytes would"
                + " stall every URLSession in the process; it sends one through libcurl, which here cannot be"
                + " loaded or would bypass the configuration's own protocolClasses."
        #else
            let reason =
                "URLSessionTransport does not send streamed bodies (UploadBody.stream); use a transport that does"
        #endif
        return .transport(
            URLError(.unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: reason]))
    }

    /// A copy of `configuration` without a `URLCache` or cookie storage: Errand keeps cookies in
    /// each request's ``TransportRequest/cookieJar``. Errand caches responses itself, and on
    /// Linux a session with a URL cache creates each task's protocol only after an asynchronous
    /// cache lookup, which can defer a cancel's work past the task's completion: a fatal error
    /// in FoundationNetworking that cancelling many requests at once made likely.
    private static func withoutURLCache(_ configuration: URLSessionConfiguration) -> URLSessionConfiguration {
        guard let copy = configuration.copy() as? URLSessionConfiguration else { return configuration }
        copy.urlCache = nil
        copy.httpShouldSetCookies = false
        copy.httpCookieStorage = nil
        return copy
    }

    /// `request` as the session sends it.
    static func urlRequest(for request: TransportRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url, timeoutInterval: request.timeoutInterval)
        urlRequest.httpMethod = request.method
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        urlRequest.httpBody = request.body
        return urlRequest
    }

    /// A request that may not have a session task yet: a cancel before the task exists stops
    /// it from being created, and one after cancels it through the router.
    ///
    /// On Apple platforms it also pauses a stream by suspending its task, which stops URLSession
    /// reading the connection there; on Linux a stream that can pause goes through libcurl instead.
    private final class SessionTask: TransportTask {
        private struct State {
            var isCancelled = false
            var task: URLSessionTask?
            /// What the consumer last asked for: `true` after a pause, `false` after a resume.
            var isPaused = false
            /// Whether `task` is suspended; changed on the control queue only.
            var isSuspended = false
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
                state.isSuspended = false
                return state.isCancelled
            }
            if cancelled { return router.cancel(task) }
            #if !canImport(FoundationNetworking)
                applyPause()
            #endif
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

        #if !canImport(FoundationNetworking)
            /// Suspends the task, from any thread. Called at every chunk that finds the consumer's
            /// buffer full; only a change reaches URLSession, whose suspensions nest.
            func pauseReceiving() {
                steer(pausing: true)
            }

            /// Resumes a task ``pauseReceiving()`` suspended, from any thread.
            func resumeReceiving() {
                steer(pausing: false)
            }

            private func steer(pausing: Bool) {
                let changed = state.withLock { state -> Bool in
                    defer { state.isPaused = pausing }
                    return state.isPaused != pausing
                }
                // The control queue applies the latest wish when it runs, so a pause and a resume
                // that race from two threads end as the later one left it.
                if changed { control.async { [self] in applyPause() } }
            }

            /// On the control queue: suspends or resumes the task to match the consumer's latest wish.
            private func applyPause() {
                let change = state.withLock { state -> (task: URLSessionTask, suspends: Bool)? in
                    guard let task = state.task, !state.isCancelled, state.isSuspended != state.isPaused else {
                        return nil
                    }
                    state.isSuspended = state.isPaused
                    return (task, state.isPaused)
                }
                guard let change else { return }
                router.setPaused(change.task, change.suspends)
                if change.suspends { change.task.suspend() } else { change.task.resume() }
            }
        #endif
    }
}
