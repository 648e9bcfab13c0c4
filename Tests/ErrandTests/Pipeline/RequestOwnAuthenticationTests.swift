import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// An ``AuthenticationInterceptor`` a request carries itself authenticates that request, at the
/// origin it goes to, whether or not the agent has a base URL; the configuration's stays with the
/// configuration's origins. Under the transport the suite runs with (`ERRAND_TRANSPORT`).
@Suite("Authentication: a request's own interceptor")
struct RequestOwnAuthenticationTests {
    /// Tokens from `server`'s `/auth` endpoints, every URL absolute: the agent has no base URL.
    struct ServerAuthenticator: Authenticator {
        let server: String
        let agent: NetworkAgent

        struct Refresh: BaseRequest {
            let url: String
            let refreshToken: String
            var method: HTTPMethod { .post }
            var arguments: [String: any Sendable]? { ["refresh_token": refreshToken] }
            var usesConfigInterceptors: Bool { false }
        }

        func apply(_ credential: Token, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(credential.access)"
        }

        func refresh(_ credential: Token) async throws(ErrandError) -> Token {
            try Token(
                try await agent.response(Refresh(url: server + "/auth/refresh", refreshToken: credential.refresh)))
        }
    }

    struct Login: BaseRequest {
        let url: String
        var method: HTTPMethod { .post }
        var arguments: [String: any Sendable]? { ["username": "ann", "password": "secret"] }
    }

    /// A request to an absolute URL, with the interceptors it carries.
    struct Call: BaseRequest {
        let url: String
        var interceptors: [any RequestInterceptor] = []
        var usesConfigInterceptors = true
    }

    let server: TestServer
    let config = NetworkConfig()
    let agent: NetworkAgent

    init() throws {
        server = try TestServer()
        config.callbackQueue = DispatchQueue(label: "errand.request-own-auth-tests")
        agent = NetworkAgent(config: config)
    }

    func interceptor() async throws -> AuthenticationInterceptor<ServerAuthenticator> {
        let token = try Token(try await agent.response(Login(url: server.baseURL + "/auth/login")))
        return AuthenticationInterceptor(
            authenticator: ServerAuthenticator(server: server.baseURL, agent: agent), credential: token)
    }

    @Test func itAuthenticatesItsRequestWhenTheAgentHasNoBaseURL() async throws {
        defer { server.stop() }
        let auth = try await interceptor()
        let answer = try await agent.response(Call(url: server.baseURL + "/auth/protected", interceptors: [auth]))
        #expect(answer.statusCode == 200)
        #expect(answer.object["token"] as? String == auth.credential?.access)
    }

    @Test func itRefreshesOnItsRequests401AndSendsItAgain() async throws {
        defer { server.stop() }
        let auth = try await interceptor()
        let before = auth.credential
        server.expireAccessTokens()
        let task = await agent.finishedTask(
            Call(url: server.baseURL + "/auth/protected", interceptors: [auth], usesConfigInterceptors: false))
        #expect(task.error == nil)
        #expect(task.attemptCount == 2)
        #expect(server.refreshCount == 1)
        #expect(auth.credential != before)
    }

    @Test func theSameInterceptorInTheConfigStaysWithTheConfigsOrigins() async throws {
        defer { server.stop() }
        let auth = try await interceptor()
        config.addInterceptor(auth)
        await #expect(throws: ErrandError.statusCode(401)) {
            try await agent.response(Call(url: server.baseURL + "/auth/protected"))
        }
        #expect(server.receivedRequests(path: "/auth/protected").last?.header("Authorization") == nil)
        #expect(server.refreshCount == 0)
    }

    @Test func aCredentialWithheldByItsScopeIsSaidInTheDebugLog() async throws {
        defer { server.stop() }
        config.debugLogEnabled = true
        let auth = try await interceptor()
        let token = try #require(auth.credential?.access)
        config.addInterceptor(auth)
        let withheld = await agent.finishedTask(Call(url: server.baseURL + "/auth/protected"))
        #expect(withheld.error == .statusCode(401))
        let line = DebugLog.line(for: withheld)
        #expect(line.contains("credential withheld"), "\(line)")
        #expect(line.contains("NetworkConfig.baseUrl and cdnUrl are empty"), "\(line)")
        #expect(!line.contains(token))
        config.baseUrl = "http://127.0.0.2:9"
        let elsewhere = DebugLog.line(for: await agent.finishedTask(Call(url: server.baseURL + "/auth/protected")))
        #expect(
            elsewhere.contains(
                "authenticates only the origins of NetworkConfig.baseUrl and cdnUrl (http://127.0.0.2:9)"))

        config.clearInterceptors()
        let own = await agent.finishedTask(Call(url: server.baseURL + "/auth/protected", interceptors: [auth]))
        #expect(own.error == nil)
        #expect(!DebugLog.line(for: own).contains("withheld"))
    }

    struct Socket: BaseRequest {
        let url: String
        let interceptors: [any RequestInterceptor]
    }

    @Test func aWebSocketsOwnInterceptorAuthenticatesItsHandshake() async throws {
        defer { server.stop() }
        let auth = try await interceptor()
        server.expireAccessTokens()
        let address = server.baseURL.replacingOccurrences(of: "http://", with: "ws://")
        let socket = try await agent.webSocket(Socket(url: address + "/ws/echo?auth=1", interceptors: [auth]))
        #expect(server.refreshCount == 1)
        try await socket.send("authenticated")
        var messages = socket.makeAsyncIterator()
        #expect(try await messages.next() == .text("authenticated"))
        await socket.close()
    }
}
