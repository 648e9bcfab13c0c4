import Foundation

/// A log-in that keeps its session in a cookie, as web back ends do: `/session/login` and
/// `/session/token`. The access tokens are `/auth`'s, so `/auth/protected` checks them and
/// `/auth/expire` ends them; the session is a refresh token kept in the `session` cookie.
enum SessionRoutes {
    static let all: [Route] = [
        Route(["POST"], "/session/login", handler: login),
        Route(["POST"], "/session/token", handler: token),
    ]

    /// Any non-empty `username` and `password` (form or JSON; `expires_in` as `/auth/login`) get
    /// `{"access_token", "token_type", "expires_in"}` and `Set-Cookie: session=…` (30 days, `HttpOnly`).
    private static func login(_ context: RouteContext) -> HTTPResponse {
        let fields = PipelineRoutes.bodyFields(context.request)
        guard fields["username"]?.isEmpty == false, fields["password"]?.isEmpty == false else {
            return PipelineRoutes.invalidRequest("username and password are required")
        }
        let expiresIn = fields["expires_in"].flatMap { Int($0) }.map { min(max($0, 0), 315_360_000) } ?? 3600
        let grant = context.server.pipeline.login(expiresIn: expiresIn)
        var response = tokenResponse(grant.accessToken, expiresIn: grant.expiresIn)
        response.headers.append(
            HTTPHeader("Set-Cookie", "session=\(grant.refreshToken); Path=/; Max-Age=2592000; HttpOnly"))
        return response
    }

    /// A new access token for the `session` cookie of a log-in; 401 `{"error": "invalid_session"}` without one.
    private static func token(_ context: RouteContext) -> HTTPResponse {
        let session = context.request.headers.values(for: "Cookie")
            .flatMap { $0.split(separator: ";") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.hasPrefix("session=") }
            .map { String($0.dropFirst("session=".count)) }
        guard let session, let renewed = context.server.pipeline.renewAccess(forSession: session) else {
            return .json(["error": "invalid_session"], status: 401)
        }
        return tokenResponse(renewed.accessToken, expiresIn: renewed.expiresIn)
    }

    private static func tokenResponse(_ accessToken: String, expiresIn: Int) -> HTTPResponse {
        .json(["access_token": accessToken, "token_type": "Bearer", "expires_in": expiresIn])
    }
}
