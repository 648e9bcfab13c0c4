import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session delegate: forwards each task's callbacks to the events closure registered for it.
///
/// It also does what URLSession on Linux does not: it enforces each request's
/// `timeoutInterval` as an idle timeout and `timeoutIntervalForResource` as a deadline, it
/// turns a declined authentication challenge into the 401 response it was, instead of a
/// cancellation, and it reports the timings it can see — first byte, total, redirects — as
/// ``TransportEvent/metrics(_:)``, for `URLSessionTaskMetrics` never arrive there.
final class SessionEventRouter: NSObject, URLSessionDataDelegate, Sendable {
    private struct Route {
        let events: @Sendable (TransportEvent) -> Void
        let idleTimer: DispatchSourceTimer
        let idleTimeout: TimeInterval
        let deadlineTimer: DispatchSourceTimer?
        /// When the task was registered, just before it was resumed: the start of its timings.
        let started = DispatchTime.now()
        /// Redirects followed before this hop.
        let redirectCount: Int
        /// When its response head arrived.
        var firstByte: DispatchTime?
        /// When the last event arrived. Events update this rather than re-arm the timer: a body
        /// arrives in thousands of chunks, and every moment spent per chunk is memory URLSession queues.
        var lastActivity = DispatchTime.now()
        /// Suspended because the consumer is behind: the silence is not the server's, and the
        /// idle timeout does not run meanwhile.
        var isPaused = false
        var didTimeOut = false
        var sentHead = false
        /// The 401 of a challenge that was declined, to deliver when the task then stops.
        var declinedChallenge: HTTPURLResponse?
    }

    private let routes = Locked([Int: Route]())

    /// Cancels `task` unless it already completed, from the caller's thread: never the delegate
    /// queue, which the session's queue may be waiting on (``BoundedDelegateQueue``) while
    /// `URLSessionTask.cancel()` waits for the session's queue.
    ///
    /// On Linux, `cancel()` on a task whose completion is under way can make FoundationNetworking
    /// report a failure for a task it has already forgotten, a fatal error (swift-corelibs-foundation
    /// SR-11310). Checking that the task is still routed narrows that window; the session having
    /// no URL cache closes the wide one (see ``URLSessionTransport``).
    func cancel(_ task: URLSessionTask, timedOut: Bool = false) {
        let isRouted = routes.withLock { routes in
            guard routes[task.taskIdentifier] != nil else { return false }
            if timedOut { routes[task.taskIdentifier]?.didTimeOut = true }
            return true
        }
        if isRouted { task.cancel() }
    }

    /// Routes `task`'s callbacks to `events`, its idle timer starting now. `deadline` is the
    /// request's, fixed when it was sent: FoundationNetworking may start the task seconds later
    /// (all its sessions share one queue), and a deadline passed by then ends it at once.
    func register(
        _ task: URLSessionTask, idleTimeout: TimeInterval, deadline: DispatchTime?, redirectCount: Int,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) {
        let id = task.taskIdentifier
        let idleTimer = DispatchSource.makeTimerSource(queue: .global())
        idleTimer.setEventHandler { [weak self, weak task] in
            guard let self, let task, !rearmIdleTimer(of: id) else { return }
            timeOut(task)
        }
        idleTimer.schedule(deadline: .now() + idleTimeout)
        let deadlineTimer = deadline.map { deadline in
            let timer = DispatchSource.makeTimerSource(queue: .global())
            timer.setEventHandler { [weak self, weak task] in
                if let task { self?.timeOut(task) }
            }
            timer.schedule(deadline: deadline)
            return timer
        }
        routes.withLock {
            $0[id] = Route(
                events: events, idleTimer: idleTimer, idleTimeout: idleTimeout, deadlineTimer: deadlineTimer,
                redirectCount: redirectCount)
        }
        idleTimer.resume()
        deadlineTimer?.resume()
    }

    /// Notes that `task` was suspended (`true`) because its consumer is behind, or resumed: the
    /// idle timeout then starts again from now.
    func setPaused(_ task: URLSessionTask, _ isPaused: Bool) {
        routes.withLock { routes in
            guard routes[task.taskIdentifier] != nil else { return }
            routes[task.taskIdentifier]?.isPaused = isPaused
            routes[task.taskIdentifier]?.lastActivity = .now()
        }
    }

    /// Re-arms the idle timer for what is left of the timeout since the last event, or for all of
    /// it while the task is paused; `false` when none is left. A task that is gone needs no timeout.
    private func rearmIdleTimer(of id: Int) -> Bool {
        routes.withLock { routes in
            guard let route = routes[id] else { return true }
            if route.isPaused {
                route.idleTimer.schedule(deadline: .now() + route.idleTimeout)
                return true
            }
            let idleNanoseconds = DispatchTime.now().uptimeNanoseconds &- route.lastActivity.uptimeNanoseconds
            let remaining = route.idleTimeout - Double(idleNanoseconds) / 1e9
            guard remaining > 0 else { return false }
            route.idleTimer.schedule(deadline: .now() + remaining)
            return true
        }
    }

    private func timeOut(_ task: URLSessionTask) {
        cancel(task, timedOut: true)
    }

    /// Passes `event` on and notes the activity for the idle timeout.
    private func forward(_ event: TransportEvent, for task: URLSessionTask, update: (inout Route) -> Void = { _ in }) {
        let events = routes.withLock { routes -> (@Sendable (TransportEvent) -> Void)? in
            guard var route = routes[task.taskIdentifier], !route.didTimeOut else { return nil }
            update(&route)
            route.lastActivity = .now()
            routes[task.taskIdentifier] = route
            return route.events
        }
        events?(event)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse {
            forward(Self.head(of: http), for: dataTask) { route in
                route.sentHead = true
                route.firstByte = .now()
            }
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        forward(.body(data), for: dataTask)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        let total = totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil
        forward(.uploadProgress(bytesSent: totalBytesSent, totalBytes: total), for: task)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let route = routes.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        route.idleTimer.cancel()
        route.deadlineTimer?.cancel()
        var finalEvents: [TransportEvent] = [.metrics(Self.metrics(of: route))]
        if route.didTimeOut {
            finalEvents.append(.completed(.timedOut))
        } else if let unauthorized = route.declinedChallenge {
            finalEvents += (route.sentHead ? [] : [Self.head(of: unauthorized)]) + [.completed(nil)]
        } else {
            let url = task.currentRequest?.url ?? task.originalRequest?.url
            finalEvents.append(.completed(error.map { Self.errandError($0, requestURL: url) }))
        }
        // What follows a completion — parsing, validation, cache stores, interceptors — must not
        // hold up the one delegate queue every other request of the session waits on.
        let events = route.events
        Self.completionQueue.async { [finalEvents] in
            finalEvents.forEach(events)
        }
    }

    private static let completionQueue = DispatchQueue.global(qos: .userInitiated)

    /// What can be measured from outside FoundationNetworking: until the head, until the end.
    private static func metrics(of route: Route) -> TransportMetrics {
        let now = DispatchTime.now()
        func seconds(until end: DispatchTime) -> TimeInterval {
            Double(end.uptimeNanoseconds &- route.started.uptimeNanoseconds) / 1e9
        }
        return TransportMetrics(
            firstByte: route.firstByte.map { seconds(until: $0) } ?? 0, total: seconds(until: now),
            redirectCount: route.redirectCount)
    }

    /// Declines every redirect: the 3xx arrives as a response, and ``URLSessionTransport`` follows
    /// it itself, by rules URLSession on Linux does not keep (see ``SessionRedirectHop``).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard Self.httpAuthenticationMethods.contains(challenge.protectionSpace.authenticationMethod) else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        // Credentials travel in the request's own Authorization header; answering the challenge
        // could only repeat them. Declining cancels the task, which then reports the 401.
        let response = challenge.failureResponse as? HTTPURLResponse
        routes.withLock { $0[task.taskIdentifier]?.declinedChallenge = response ?? Self.unauthorized(task) }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }

    private static let httpAuthenticationMethods: Set<String> = [
        NSURLAuthenticationMethodDefault, NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodHTTPDigest,
        NSURLAuthenticationMethodNTLM, NSURLAuthenticationMethodNegotiate,
    ]

    private static func unauthorized(_ task: URLSessionTask) -> HTTPURLResponse? {
        task.originalRequest?.url.flatMap {
            HTTPURLResponse(url: $0, statusCode: 401, httpVersion: nil, headerFields: nil)
        }
    }

    private static func head(of response: HTTPURLResponse) -> TransportEvent {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            headers[String(describing: name)] = String(describing: value)
        }
        return .responseHead(statusCode: response.statusCode, headers: headers)
    }

    /// The error a session task of `requestURL` failed with, as Errand reports it: its code
    /// corrected, and the URL named, which FoundationNetworking leaves out of some errors.
    private static func errandError(_ error: any Error, requestURL: URL?) -> ErrandError {
        let nsError = error as NSError
        let code =
            (error as? URLError)?.code
            ?? (nsError.domain == NSURLErrorDomain ? URLError.Code(rawValue: nsError.code) ?? .unknown : .unknown)
        let url = nsError.userInfo[NSURLErrorFailingURLErrorKey] as? URL ?? requestURL
        let corrected = TransportErrorCode.corrected(code, url: url, message: nsError.localizedDescription)
        let made = ErrandError(URLError(corrected, userInfo: nsError.userInfo))
        return url.map(made.naming) ?? made
    }
}
