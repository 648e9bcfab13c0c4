// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

// The app's own helpers the article's code stands on.
private func md5(_ text: String) -> String { text }
private func captchaSid(in data: Data) -> String? { nil }
extension TransportRequest {
    fileprivate func appendingQuery(_ items: [String: String]) -> TransportRequest { self }
}

/// The code the article "Interceptors, token refresh and retry" shows, compiled
/// (DocumentedCodeTests checks each snippet is the article's).
enum InterceptorsSnippets {
    // snippet: Interceptors.md
    struct SigningInterceptor: RequestInterceptor {
        let secret: String
        func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest {
            var signed = request
            let path = request.url.path + (request.url.query.map { "?" + $0 } ?? "")
            signed.headers["X-Signature"] = md5(path + secret)
            return signed
        }
    }
    // end snippet

    static func signing(secret: String) {
        // snippet: Interceptors.md
        NetworkConfig.shared.addInterceptor(SigningInterceptor(secret: secret))
        // end snippet
    }

    // snippet: Interceptors.md
    struct Token: AuthenticationCredential, Decodable {
        let access: String, refresh: String, expiresAt: Date
        var requiresRefresh: Bool { expiresAt < Date() + 60 }   // refresh a minute early
    }

    struct RefreshApi: BaseRequest {
        let refreshToken: String
        var url: String { "/oauth/token" }
        var method: HTTPMethod { .post }
        var arguments: [String: any Sendable]? { ["grant_type": "refresh_token", "refresh_token": refreshToken] }
        var usesConfigInterceptors: Bool { false }   // never waits for the refresh it performs
    }

    struct TokenAuthenticator: Authenticator {
        func apply(_ token: Token, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(token.access)"
        }
        func refresh(_ token: Token) async throws(ErrandError) -> Token {
            try await RefreshApi(refreshToken: token.refresh).decoded(Token.self)
        }
    }
    // end snippet

    static func refreshing(savedToken: Token?) {
        // snippet: Interceptors.md
        let authentication = AuthenticationInterceptor(authenticator: TokenAuthenticator(), credential: savedToken)
        NetworkConfig.shared.addInterceptor(authentication)
        // end snippet
    }

    struct UploadingAuthenticator: Authenticator {
        func apply(_ token: Token, to request: inout TransportRequest) {}
        func refresh(_ token: Token) async throws(ErrandError) -> Token { token }
        // snippet: Interceptors.md
        func authenticates(_ request: TransportRequest, apiOrigins: [URL]) -> Bool {
            request.url.host == "upload.example.com" || apiOrigins.contains { $0.host == request.url.host }
        }
        // end snippet
    }

    // snippet: Interceptors.md
    struct VKErrors: RequestInterceptor {
        func validate(_ response: Response, for task: RequestTask) throws(ErrandError) {
            guard let error = (response.jsonObject as? [String: Any])?["error"] as? [String: Any] else { return }
            throw .api(APIError(code: "\(error["error_code"] ?? "")", message: "\(error["error_msg"] ?? "")",
                                data: response.data))
        }
    }
    // end snippet

    struct VKAuthenticator: Authenticator {
        func apply(_ token: Token, to request: inout TransportRequest) {}
        func refresh(_ token: Token) async throws(ErrandError) -> Token { token }
        // snippet: Interceptors.md
        // In the authenticator:
        func isAuthenticationError(_ error: ErrandError, response: Response?) -> Bool {
            if case .api(let apiError) = error { return apiError.code == "5" }   // "access_token has expired"
            return error == .statusCode(401)
        }
        // end snippet
    }

    // snippet: Interceptors.md
    struct CaptchaSolver: RequestInterceptor {
        let ask: @Sendable (_ sid: String) async -> String   // shows the image, returns what was typed

        func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision {
            guard case .api(let apiError) = error, apiError.code == "14", let sid = captchaSid(in: apiError.data)
            else { return .doNotRetry }
            task.userInfo["captcha"] = [sid, await ask(sid)]
            return .retry
        }

        func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest {
            guard let captcha = task.userInfo["captcha"] as? [String] else { return request }
            return request.appendingQuery(["captcha_sid": captcha[0], "captcha_key": captcha[1]])
        }
    }
    // end snippet

    static func retrying() {
        // snippet: Interceptors.md
        NetworkConfig.shared.addInterceptor(RetryPolicy())   // 3 attempts, from 0.5 s apart
        let patient = RetryPolicy(maxAttempts: 5, baseDelay: 1, maxDelay: 60)
        // end snippet
        _ = patient
    }
}
