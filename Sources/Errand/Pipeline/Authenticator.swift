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
}

extension Authenticator {
    /// `true` for ``ErrandError/statusCode(_:)`` with `401`.
    public func isAuthenticationError(_ error: ErrandError, response: Response?) -> Bool {
        error == .statusCode(401)
    }
}
