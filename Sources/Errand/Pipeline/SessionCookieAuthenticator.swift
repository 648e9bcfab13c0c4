import Foundation

/// Logs in again with the session cookie: when the access token expires, it sends the log-in
/// request again with no credential but the cookies — the session cookie a log-in form or an
/// earlier token response set — and reads a new token from the answer.
///
/// ```swift
/// struct TokenApi: BaseRequest {
///     var url: String { "/auth/token" }
///     var method: HTTPMethod { .post }
///     var usesConfigInterceptors: Bool { false }  // not authenticated with the token it renews
/// }
/// let authenticator = SessionCookieAuthenticator { TokenApi() }
/// NetworkConfig.shared.addInterceptor(AuthenticationInterceptor(authenticator: authenticator, store: store))
/// ```
///
/// With an ``AccountStore`` the refresh sends the cookies of the account it refreshes for, and
/// the cookies its answer sets go to that account. When the session itself has ended, the
/// token request's error (a `401`, say) fails the requests waiting for it: show the log-in form.
public struct SessionCookieAuthenticator: Authenticator {
    private let agent: NetworkAgent
    private let tokenRequest: @Sendable () -> any BaseRequest
    private let readToken: @Sendable (Response) throws(ErrandError) -> AccessToken

    /// Creates an authenticator.
    ///
    /// - Parameters:
    ///   - agent: The agent that sends the token request. Default ``NetworkAgent/shared``.
    ///   - tokenRequest: The request that answers a new token for the session cookie; it must set
    ///     ``BaseRequest/usesConfigInterceptors`` to `false`, or it would wait for itself.
    ///   - readToken: Reads the answer. Default: an OAuth 2.0 token response
    ///     (``AccessToken/init(tokenResponse:)``).
    public init(
        agent: NetworkAgent = .shared, tokenRequest: @escaping @Sendable () -> any BaseRequest,
        readToken: @escaping @Sendable (Response) throws(ErrandError) -> AccessToken = {
            response throws(ErrandError) in try AccessToken(tokenResponse: response)
        }
    ) {
        self.agent = agent
        self.tokenRequest = tokenRequest
        self.readToken = readToken
    }

    /// Sends `token` as `Authorization: Bearer`.
    public func apply(_ token: AccessToken, to request: inout TransportRequest) {
        request.headers["Authorization"] = "Bearer \(token.value)"
    }

    /// Sends the token request with the session's cookies and reads the new token.
    /// - Throws: The token request's error; ``ErrandError/serialization(_:)`` when it goes through
    ///   the configuration's interceptors, which would have it wait for this refresh.
    public func refresh(_ token: AccessToken) async throws(ErrandError) -> AccessToken {
        let request = tokenRequest()
        guard !request.usesConfigInterceptors else {
            throw .serialization(
                "\(type(of: request)) renews the token, so it must not be authenticated with it:"
                    + " set usesConfigInterceptors to false")
        }
        return try readToken(try await agent.response(request, ignoreCache: true))
    }
}
