import Foundation

/// Errand's own endpoints for request-pipeline tests (interceptors, retries, token refresh,
/// errors inside 2xx bodies), not part of httpbin: `/auth/…`, `/captcha/…`, `/flaky/{key}` and
/// `/api-error`. ``TestServer``'s documentation describes them; their state is ``PipelineState``.
enum PipelineRoutes {
    static let all: [Route] = [
        Route(["POST"], "/auth/login", handler: login),
        Route(["GET", "POST"], "/auth/protected", handler: protected),
        Route(["GET", "POST"], "/auth/protected/{rest...}", handler: protected),
        Route(["GET"], "/auth/protected-in-body", handler: protectedInBody),
        Route(["POST"], "/auth/refresh", handler: refresh),
        Route(["POST"], "/auth/expire") { context in
            context.server.pipeline.expireAccessTokens()
            return HTTPResponse(status: 204)
        },
        Route(["POST"], "/auth/revoke") { context in
            context.server.pipeline.revokeRefreshTokens()
            return HTTPResponse(status: 204)
        },
        Route(["GET"], "/auth/stats", handler: stats),
        Route(["GET"], "/captcha/protected", handler: captchaProtected),
        Route(["GET"], "/captcha/{image}", handler: captchaImage),
        Route(["GET", "POST", "PUT", "DELETE"], "/flaky/{key}", handler: flaky),
        Route(["GET", "POST"], "/api-error", handler: apiError),
    ]

    /// The longest `delay_ms` `/auth/refresh` and `/auth/protected` honour.
    static let maxRefreshDelayMilliseconds = 5000

    /// The error VK's API puts in a 200 body, as `{"error": {"error_code": …, "error_msg": …}}`.
    private static func apiErrorBody(code: Int, message: String, extra: [String: Any] = [:]) -> HTTPResponse {
        let error = extra.merging(["error_code": code, "error_msg": message]) { _, fixed in fixed }
        return .json(["error": error])
    }

    /// The last value of the query parameter `name`.
    private static func query(_ context: RouteContext, _ name: String) -> String? {
        context.request.queryItems.last { $0.name == name }?.value
    }

    /// The body's fields, from a JSON object or a URL-encoded form: strings, and whole numbers as their digits.
    static func bodyFields(_ request: HTTPRequest) -> [String: String] {
        let parsed = HTTPBinEcho(request: request).dictionary([.form, .json])
        let object = (parsed["json"] as? [String: Any]) ?? (parsed["form"] as? [String: Any]) ?? [:]
        return object.compactMapValues { value in
            if let text = value as? String { return text }
            if let number = value as? Int { return String(number) }
            return nil
        }
    }

    // MARK: /auth

    /// OAuth's answer to a request missing a field or holding a bad one.
    static func invalidRequest(_ description: String) -> HTTPResponse {
        .json(["error": "invalid_request", "error_description": description], status: 400)
    }

    private static func tokenResponse(_ grant: PipelineState.Grant) -> HTTPResponse {
        .json([
            "access_token": grant.accessToken, "refresh_token": grant.refreshToken, "token_type": "Bearer",
            "expires_in": grant.expiresIn,
        ])
    }

    /// Any non-empty `username` and `password` get tokens; `expires_in` (seconds, default 3600)
    /// sets the access token's lifetime.
    private static func login(_ context: RouteContext) -> HTTPResponse {
        let fields = bodyFields(context.request)
        guard let username = fields["username"], !username.isEmpty, let password = fields["password"],
            !password.isEmpty
        else {
            return invalidRequest("username and password are required")
        }
        var expiresIn = 3600
        if let text = fields["expires_in"] {
            // Ten years at most, so the expiry date stays an ordinary date.
            guard let seconds = Int(text), (0...315_360_000).contains(seconds) else {
                return invalidRequest("expires_in must be a whole number of seconds ≥ 0")
            }
            expiresIn = seconds
        }
        return tokenResponse(context.server.pipeline.login(expiresIn: expiresIn))
    }

    /// The token of `Authorization: Bearer <token>` (the scheme compared case-insensitively).
    static func bearerToken(_ request: HTTPRequest) -> String? {
        guard let header = request.headers.first("Authorization"), let space = header.firstIndex(of: " "),
            header[..<space].lowercased() == "bearer"
        else {
            return nil
        }
        let token = header[space...].trimmingCharacters(in: .whitespaces)
        return token.isEmpty ? nil : token
    }

    /// `?delay_ms=N` waits N milliseconds before the token is checked, so that a token can expire
    /// while the request is in flight.
    private static func protected(_ context: RouteContext) -> HTTPResponse {
        if let invalid = delay(context) { return invalid }
        let token = bearerToken(context.request)
        guard let token, context.server.pipeline.checkAccessToken(token) else {
            // Never `Basic`: FoundationNetworking would wait for credentials that never come.
            var response = HTTPResponse.json(["error": "invalid_token"], status: 401)
            response.headers.append(HTTPHeader("WWW-Authenticate", #"Bearer error="invalid_token""#))
            return response
        }
        return .json(["authenticated": true, "token": token, "path": URLEncoding.unquote(context.request.rawPath)])
    }

    /// Sleeps for `?delay_ms=N` (at most 5000), interruptibly; a 400 for a bad value.
    private static func delay(_ context: RouteContext) -> HTTPResponse? {
        guard let text = query(context, "delay_ms") else { return nil }
        guard let milliseconds = Int(text), (0...maxRefreshDelayMilliseconds).contains(milliseconds) else {
            return invalidRequest("delay_ms must be a whole number from 0 to \(maxRefreshDelayMilliseconds)")
        }
        context.sleep(seconds: Double(milliseconds) / 1000)
        return nil
    }

    /// As VK's API does: a bad token is a 200 whose body holds error 5. The token may also come
    /// as the `access_token` query parameter, VK's own way of sending it.
    private static func protectedInBody(_ context: RouteContext) -> HTTPResponse {
        let token = bearerToken(context.request) ?? query(context, "access_token")
        guard let token, context.server.pipeline.checkAccessToken(token) else {
            return apiErrorBody(code: 5, message: "User authorization failed: access_token has expired.")
        }
        return .json(["response": ["authenticated": true, "token": token]])
    }

    /// A current `refresh_token` gets new tokens and is used up with the access token issued
    /// alongside it. `?delay_ms=N` (at most 5000) answers only after N milliseconds.
    private static func refresh(_ context: RouteContext) -> HTTPResponse {
        let pipeline = context.server.pipeline
        pipeline.countRefreshAttempt()
        if let invalid = delay(context) { return invalid }
        guard let refreshToken = bodyFields(context.request)["refresh_token"], !refreshToken.isEmpty else {
            return invalidRequest("refresh_token is required")
        }
        guard let grant = pipeline.refresh(refreshToken) else {
            return .json(["error": "invalid_grant"], status: 401)
        }
        return tokenResponse(grant)
    }

    private static func stats(_ context: RouteContext) -> HTTPResponse {
        let stats = context.server.pipeline.authStats
        return .json([
            "logins": stats.logins, "refreshes": stats.refreshes, "refresh_attempts": stats.refreshAttempts,
            "protected_ok": stats.protectedAccepted, "protected_rejected": stats.protectedRejected,
        ])
    }

    // MARK: /captcha

    /// VK's captcha flow: error 14 in a 200 body until `captcha_sid` and `captcha_key` answer an
    /// open captcha (the key is the sid reversed); each captcha takes one answer.
    private static func captchaProtected(_ context: RouteContext) -> HTTPResponse {
        let pipeline = context.server.pipeline
        if let sid = query(context, "captcha_sid"), let key = query(context, "captcha_key"),
            pipeline.solveCaptcha(sid: sid, key: key)
        {
            return .json(["response": ["passed": true]])
        }
        let sid = pipeline.newCaptcha()
        return apiErrorBody(
            code: 14, message: "Captcha needed",
            extra: [
                "captcha_sid": sid, "captcha_img": "http://127.0.0.1:\(context.server.port)/captcha/\(sid).png",
            ])
    }

    /// A 1×1 transparent PNG.
    private static let captchaPNG =
        Data(
            base64Encoded:
                "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")
        ?? Data()

    /// The image `captcha_img` points to; the same picture for every captcha.
    private static func captchaImage(_ context: RouteContext) -> HTTPResponse {
        guard context.parameters["image"]?.hasSuffix(".png") == true else { return .notFound }
        return HTTPResponse(status: 200, headers: [HTTPHeader("Content-Type", "image/png")], body: captchaPNG)
    }

    // MARK: /flaky

    /// The first `failures` calls for the key answer `status` (or, with `mode=drop`, close the
    /// connection unanswered); later ones succeed.
    private static func flaky(_ context: RouteContext) -> HTTPResponse {
        let key = context.parameters["key"] ?? ""
        var failures = 1
        if let text = query(context, "failures") {
            guard let count = Int(text), count >= 0 else {
                return .text("failures must be a whole number ≥ 0\n", status: 400)
            }
            failures = count
        }
        var status = 503
        if let text = query(context, "status") {
            guard let code = Int(text), (400...599).contains(code) else {
                return .text("status must be 400...599\n", status: 400)
            }
            status = code
        }
        let retryAfter = query(context, "retry_after")
        // A control character would let the query split the response head.
        if let retryAfter, retryAfter.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return .text("retry_after must not hold control characters\n", status: 400)
        }
        let mode = query(context, "mode")
        guard mode == nil || mode == "drop" else { return .text("mode must be drop\n", status: 400) }

        let call = context.server.pipeline.countFlakyCall(key: key)
        guard call > failures else {
            if mode == "drop" { return .dropConnection }
            var response = HTTPResponse.json(["error": "flaky", "call": call], status: status)
            if let retryAfter { response.headers.append(HTTPHeader("Retry-After", retryAfter)) }
            return response
        }
        return .json(["key": key, "call": call, "method": context.request.method])
    }

    // MARK: /api-error

    /// Always 200 with `{"error": {"error_code": code, "error_msg": message}}`; `code` defaults
    /// to 1 and `message` to VK's text for it.
    private static func apiError(_ context: RouteContext) -> HTTPResponse {
        var code = 1
        if let text = query(context, "code") {
            guard let number = Int(text) else { return .text("code must be a whole number\n", status: 400) }
            code = number
        }
        return apiErrorBody(code: code, message: query(context, "message") ?? "Unknown error occurred")
    }
}
