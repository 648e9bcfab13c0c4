import Foundation

/// One exchange of a request sent through ``URLSessionTransport``, which follows redirects itself:
/// URLSession on Linux drops a POST body on 307/308 and sends `Authorization` and `Cookie` on to
/// any origin. The session hands over each 3xx as a response; this decides, by
/// ``RedirectPolicy``, whether its events go to the caller or lead to the next exchange.
final class SessionRedirectHop: Sendable {
    /// What to do with an event of this exchange.
    enum Action {
        /// Pass it on to the caller.
        case forward(TransportEvent)
        /// Drop it: it belongs to a redirect response.
        case ignore
        /// The redirect response is over: send this request next.
        case follow(TransportRequest)
        /// The redirect is refused: end the request with this error.
        case fail(ErrandError)
    }

    /// What this exchange sent.
    let request: TransportRequest
    /// Redirects followed before this exchange.
    let redirectCount: Int
    private let policy = RedirectPolicy()
    private let decision = Locked<Result<TransportRequest, ErrandError>?>(nil)

    init(request: TransportRequest, redirectCount: Int) {
        self.request = request
        self.redirectCount = redirectCount
    }

    func receive(_ event: TransportEvent) -> Action {
        switch event {
        case .responseHead(let statusCode, let headers):
            if let jar = request.cookieJar, let joined = headers.headerField("Set-Cookie") {
                jar.storeCookies(fromSetCookieFields: SetCookie.fields(joinedBySession: joined), for: request.url)
            }
            guard RedirectPolicy.isRedirect(statusCode), let location = headers.headerField("Location") else {
                return .forward(event)
            }
            let next = policy.next(
                after: request, statusCode: statusCode, location: location, redirectCount: redirectCount)
            decision.withLock { $0 = next }
            return .ignore
        case .completed(let error):
            guard let decision = decision.withLock({ $0 }) else { return .forward(event) }
            // A cancel or a failure while the redirect's body arrived ends the request as it is.
            if let error { return .forward(.completed(error)) }
            switch decision {
            case .success(let next): return .follow(next)
            case .failure(let refusal): return .fail(refusal)
            }
        default:
            return decision.withLock { $0 } == nil ? .forward(event) : .ignore
        }
    }
}
