import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// An OAuth-style token pair from the loopback server's `/auth` endpoints.
struct Token: AuthenticationCredential, Equatable, Codable {
    let access: String
    let refresh: String
    var requiresRefresh: Bool { false }

    init(access: String, refresh: String) {
        self.access = access
        self.refresh = refresh
    }

    init(_ response: Response) throws(ErrandError) {
        guard let access = response.object["access_token"] as? String,
            let refresh = response.object["refresh_token"] as? String
        else { throw .serialization("no token pair in the response") }
        self.init(access: access, refresh: refresh)
    }
}

struct LoginApi: BaseRequest {
    var url: String { "/auth/login" }
    var method: HTTPMethod { .post }
    var arguments: [String: any Sendable]? { ["username": "ann", "password": "secret"] }
    var usesConfigInterceptors: Bool { false }
}

/// The refresh call opts out of the config's interceptors, so it never waits for itself.
struct RefreshApi: BaseRequest {
    let refreshToken: String
    let delayMilliseconds: Int
    var url: String { "/auth/refresh?delay_ms=\(delayMilliseconds)" }
    var method: HTTPMethod { .post }
    var arguments: [String: any Sendable]? { ["refresh_token": refreshToken] }
    var usesConfigInterceptors: Bool { false }
}

struct ProtectedApi: BaseRequest {
    var url: String
}

struct TokenAuthenticator: Authenticator {
    let agent: NetworkAgent
    var refreshDelayMilliseconds = 200

    func apply(_ credential: Token, to request: inout TransportRequest) {
        request.headers["Authorization"] = "Bearer \(credential.access)"
    }

    func refresh(_ credential: Token) async throws(ErrandError) -> Token {
        let refresh = RefreshApi(refreshToken: credential.refresh, delayMilliseconds: refreshDelayMilliseconds)
        do {
            return try Token(try await agent.response(refresh))
        } catch {
            throw .api(APIError(code: "refresh_failed", message: "\(error)"))
        }
    }

    /// A 401, or VK's error 5 ("access_token has expired") inside a 200 body.
    func isAuthenticationError(_ error: ErrandError, response: Response?) -> Bool {
        if case .api(let apiError) = error { return apiError.code == "5" }
        return error == .statusCode(401)
    }
}

/// Reports VK-style `{"error": {"error_code": …, "error_msg": …}}` bodies as ``ErrandError/api(_:)``.
struct VKErrorValidator: RequestInterceptor {
    func validate(_ response: Response, for task: RequestTask) throws(ErrandError) {
        guard let error = response.object["error"] as? [String: Any] else { return }
        let code = (error["error_code"] as? NSNumber)?.stringValue ?? "?"
        throw .api(APIError(code: code, message: error["error_msg"] as? String ?? "", data: response.data))
    }
}

@Suite("Token refresh")
struct AuthenticationTests {
    let fixture: PipelineFixture
    let agent: NetworkAgent

    init() throws {
        fixture = try PipelineFixture()
        agent = fixture.makeAgent()
    }

    /// Logs in and authenticates every later request of the agent.
    func logIn(refreshDelayMilliseconds: Int = 200) async throws -> AuthenticationInterceptor<TokenAuthenticator> {
        let token = try Token(try await agent.response(LoginApi()))
        let authenticator = TokenAuthenticator(agent: agent, refreshDelayMilliseconds: refreshDelayMilliseconds)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: token)
        fixture.config.addInterceptor(interceptor)
        return interceptor
    }

    func sendTwenty(_ path: String) async -> [Result<Response, ErrandError>] {
        await withTaskGroup(of: Result<Response, ErrandError>.self) { group in
            for index in 0..<20 {
                group.addTask { [agent] in
                    do throws(ErrandError) {
                        return .success(try await agent.response(ProtectedApi(url: "\(path)/\(index)")))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test func twentyConcurrent401sCauseOneRefreshAndAllSucceed() async throws {
        defer { fixture.server.stop() }
        let interceptor = try await logIn()
        let before = interceptor.credential
        fixture.server.expireAccessTokens()
        let results = await sendTwenty("/auth/protected")
        #expect(results.allSatisfy { (try? $0.get().statusCode) == 200 })
        #expect(fixture.server.refreshCount == 1)
        #expect(interceptor.credential != before)
    }

    @Test func aFailedRefreshFailsEveryWaitingRequestWithItsError() async throws {
        defer { fixture.server.stop() }
        _ = try await logIn()
        fixture.server.expireAccessTokens()
        fixture.server.revokeRefreshTokens()
        let results = await sendTwenty("/auth/protected")
        for result in results {
            guard case .failure(.api(let error)) = result else {
                Issue.record("expected the refresh's error, got \(result)")
                continue
            }
            #expect(error.code == "refresh_failed")
        }
        #expect(fixture.server.refreshAttemptCount == 1)
    }

    @Test func anExpiredTokenReportedInA200BodyIsRefreshedAndTheRequestResent() async throws {
        defer { fixture.server.stop() }
        fixture.config.addInterceptor(VKErrorValidator())
        _ = try await logIn(refreshDelayMilliseconds: 0)
        fixture.server.expireAccessTokens()
        let task = await agent.finishedTask(ProtectedApi(url: "/auth/protected-in-body"))
        #expect(task.error == nil)
        #expect(task.response?.object["response"] != nil)
        #expect(task.attemptCount == 2)
        #expect(fixture.server.refreshCount == 1)
    }

    @Test func aRequestRefusedWithAnOlderTokenIsResentWithoutAnotherRefresh() async throws {
        defer { fixture.server.stop() }
        let interceptor = try await logIn(refreshDelayMilliseconds: 0)
        let stale = try #require(interceptor.credential)
        fixture.server.expireAccessTokens()
        _ = await sendTwenty("/auth/protected")
        #expect(fixture.server.refreshCount == 1)
        // A request adapted with the stale token before the refresh, refused after it.
        struct StaleToken: RequestInterceptor {
            let token: Token
            func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError)
                -> TransportRequest
            {
                var request = request
                if task.attemptCount == 0 { request.headers["Authorization"] = "Bearer \(token.access)" }
                return request
            }
        }
        struct LateRequest: BaseRequest {
            let stale: Token
            var url: String { "/auth/protected/late" }
            var interceptors: [any RequestInterceptor] { [StaleToken(token: stale)] }
        }
        let task = await agent.finishedTask(LateRequest(stale: stale))
        #expect(task.error == nil)
        #expect(task.attemptCount == 2)
        #expect(fixture.server.refreshCount == 1)
    }

    @Test func usesConfigInterceptorsFalseSkipsTheConfigsInterceptors() async throws {
        defer { fixture.server.stop() }
        struct Header: RequestInterceptor {
            let name: String
            func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError)
                -> TransportRequest
            {
                var request = request
                request.headers[name] = request.headers.count.description
                return request
            }
        }
        struct HeadersApi: BaseRequest {
            var usesConfigInterceptors = true
            var url: String { "/headers" }
            var interceptors: [any RequestInterceptor] { [Header(name: "X-Own")] }
        }
        fixture.config.addInterceptor(Header(name: "X-Config"))
        let both = try await agent.response(HeadersApi()).object["headers"] as? [String: String]
        #expect(both?["X-Config"] != nil)
        // The request's own interceptors run after the config's: they see one more header.
        #expect(Int(both?["X-Own"] ?? "") == Int(both?["X-Config"] ?? "").map { $0 + 1 })
        let own =
            try await agent.response(HeadersApi(usesConfigInterceptors: false)).object["headers"]
            as? [String: String]
        #expect(own?["X-Config"] == nil)
        #expect(own?["X-Own"] != nil)
    }
}
