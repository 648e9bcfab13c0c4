import Foundation

/// A credential an ``Authenticator`` applies to requests: an OAuth token pair, say.
public protocol AuthenticationCredential: Sendable {
    /// Whether it should be refreshed before it is used again — an access token about to expire.
    /// ``AuthenticationInterceptor`` then refreshes it before sending.
    var requiresRefresh: Bool { get }
}

/// How an ``AuthenticationInterceptor`` applies and refreshes one kind of credential.
///
/// ```swift
/// struct TokenAuthenticator: Authenticator {
///     func apply(_ credential: Token, to request: inout TransportRequest) {
///         request.headers["Authorization"] = "Bearer \(credential.accessToken)"
///     }
///     func refresh(_ credential: Token) async throws(ErrandError) -> Token {
///         try await RefreshApi(refreshToken: credential.refreshToken).decoded(Token.self)
///     }
/// }
/// ```
/// The request `refresh` sends should set ``BaseRequest/usesConfigInterceptors`` to `false`, so
/// that it is not itself authenticated with the credential being refreshed.
public protocol Authenticator: Sendable {
    /// The kind of credential.
    associatedtype Credential: AuthenticationCredential

    /// Puts `credential` on `request`, usually as an `Authorization` header.
    func apply(_ credential: Credential, to request: inout TransportRequest)

    /// A fresh credential for an expired one; throwing fails every request waiting for it.
    func refresh(_ credential: Credential) async throws(ErrandError) -> Credential

    /// Whether `error` means the credential was refused. Default: ``ErrandError/statusCode(_:)``
    /// with `401`. Return `true` for an ``ErrandError/api(_:)`` that reports an expired token too.
    func isAuthenticationError(_ error: ErrandError, response: Response?) -> Bool

    /// Whether `request` may carry the credential: the interceptor neither applies it to a
    /// request outside this scope nor refreshes it for such a request's `401`.
    ///
    /// Default: `request` goes to the origin — scheme, host and port — of one of `apiOrigins`. For
    /// an interceptor of the configuration they are those of the agent's ``NetworkConfig/baseUrl``
    /// and ``NetworkConfig/cdnUrl``: a request type with a `baseUrl` of its own (a third party's
    /// API) or an absolute URL elsewhere is sent without the credential, and with neither URL
    /// configured no request carries it. For an interceptor a request carries itself
    /// (``BaseRequest/interceptors``) it is the origin of that request's own URL. Return `true`
    /// for more hosts to widen the scope, such as an upload host of the same API.
    func authenticates(_ request: TransportRequest, apiOrigins: [URL]) -> Bool
}

extension Authenticator {
    /// `true` for ``ErrandError/statusCode(_:)`` with `401`.
    public func isAuthenticationError(_ error: ErrandError, response: Response?) -> Bool {
        error == .statusCode(401)
    }

    /// `true` when `request`'s URL has the scheme, host and port of one of `apiOrigins`.
    public func authenticates(_ request: TransportRequest, apiOrigins: [URL]) -> Bool {
        apiOrigins.contains { Self.isSameOrigin($0, request.url) }
    }

    /// Whether two URLs share scheme, host and port, a scheme's default port and none being the
    /// same; `ws` counts as `http` and `wss` as `https`, whose connections a WebSocket's are.
    static func isSameOrigin(_ first: URL, _ second: URL) -> Bool {
        let defaultPorts = ["http": 80, "https": 443]
        func origin(_ url: URL) -> (String, String, Int?)? {
            let url = WebSocketURL.http(url)
            guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            return (scheme, host, url.port ?? defaultPorts[scheme])
        }
        guard let first = origin(first), let second = origin(second) else { return false }
        return first == second
    }
}
