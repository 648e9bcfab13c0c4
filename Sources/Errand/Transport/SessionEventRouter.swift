import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The session delegate: forwards each task's callbacks to the events closure registered for it.
///
/// It also does what URLSession on Linux does not: it enforces each request's
/// `timeoutInterval` as an idle timeout and `timeoutIntervalForResource` as a deadline, and it
/// turns a declined authentication challenge into the 401 response it was, instead of a cancellation.
final class SessionEventRouter: NSObject, URLSessionDataDelegate, Sendable {
    private struct Route {
        let events: @Sendable (TransportEvent) -> Void
        let idleTimer: DispatchSourceTimer
        let idleTimeout: TimeInterval
        let deadlineTimer: DispatchSourceTimer?
        var didTimeOut = false
        var sentHead = false
        /// The 401 of a challenge that was declined, to deliver when the task then stops.
        var declinedChallenge: HTTPURLResponse?
    }

    private let routes = Locked([Int: Route]())

    func register(
        _ task: URLSessionTask, idleTimeout: TimeInterval, deadline: TimeInterval?,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) {
        let id = task.taskIdentifier
        let idleTimer = timeoutTimer(for: task, after: idleTimeout)
        let deadlineTimer = deadline.map { timeoutTimer(for: task, after: $0) }
        routes.withLock {
            $0[id] = Route(events: events, idleTimer: idleTimer, idleTimeout: idleTimeout, deadlineTimer: deadlineTimer)
        }
        idleTimer.resume()
        deadlineTimer?.resume()
    }

    /// A timer, not yet resumed, that fails `task` with a timeout when it fires.
    private func timeoutTimer(for task: URLSessionTask, after seconds: TimeInterval) -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: .global())
        let id = task.taskIdentifier
        timer.setEventHandler { [weak self, weak task] in
            self?.routes.withLock { $0[id]?.didTimeOut = true }
            task?.cancel()
        }
        timer.schedule(deadline: .now() + seconds)
        return timer
    }

    /// Passes `event` on and restarts the task's idle timer.
    private func forward(_ event: TransportEvent, for task: URLSessionTask, update: (inout Route) -> Void = { _ in }) {
        let events = routes.withLock { routes -> (@Sendable (TransportEvent) -> Void)? in
            guard var route = routes[task.taskIdentifier], !route.didTimeOut else { return nil }
            update(&route)
            route.idleTimer.schedule(deadline: .now() + route.idleTimeout)
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
            forward(Self.head(of: http), for: dataTask) { $0.sentHead = true }
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
        if route.didTimeOut {
            route.events(.completed(.timedOut))
        } else if let unauthorized = route.declinedChallenge {
            if !route.sentHead { route.events(Self.head(of: unauthorized)) }
            route.events(.completed(nil))
        } else {
            route.events(.completed(error.map(Self.errandError)))
        }
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

    private static func errandError(_ error: any Error) -> ErrandError {
        if let urlError = error as? URLError { return ErrandError(urlError) }
        let nsError = error as NSError
        let code = nsError.domain == NSURLErrorDomain ? URLError.Code(rawValue: nsError.code) ?? .unknown : .unknown
        return ErrandError(URLError(code, userInfo: nsError.userInfo))
    }
}
