import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// The app's credential goes to the app's API only: a request type with a base URL of its own
/// (a third party's LLM server, say) is sent without it, and its 401 refreshes nothing.
@Suite("Authentication scope")
struct AuthenticationScopeTests {
    /// A bearer token that counts its refreshes; `extraHosts` widens the scope.
    final class CountingAuthenticator: Authenticator {
        struct Credential: AuthenticationCredential {
            let token: String
            var requiresRefresh: Bool { false }
        }

        let extraOrigins: [URL]
        private let refreshes = Locked(0)
        var refreshCount: Int { refreshes.withLock { $0 } }

        init(extraOrigins: [URL] = []) {
            self.extraOrigins = extraOrigins
        }

        func apply(_ credential: Credential, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(credential.token)"
        }

        func refresh(_ credential: Credential) async throws(ErrandError) -> Credential {
            refreshes.withLock { $0 += 1 }
            return Credential(token: credential.token + "+")
        }

        func authenticates(_ request: TransportRequest, apiOrigins: [URL]) -> Bool {
            (apiOrigins + extraOrigins).contains { Self.isSameOrigin($0, request.url) }
        }
    }

    struct Echo: BaseRequest {
        var baseUrl: String = ""
        var url: String = "/headers"
    }

    struct Setup {
        let api = try! TestServer()
        let thirdParty = try! TestServer()
        let agent: NetworkAgent
        let authenticator: CountingAuthenticator

        init(baseUrl: (TestServer) -> String = { $0.baseURL }, extraOrigins: Bool = false) {
            let config = NetworkConfig()
            config.baseUrl = baseUrl(api)
            config.callbackQueue = DispatchQueue(label: "errand.scope-tests")
            authenticator = CountingAuthenticator(
                extraOrigins: extraOrigins ? [URL(string: thirdParty.baseURL)!] : [])
            config.addInterceptor(
                AuthenticationInterceptor(authenticator: authenticator, credential: .init(token: "app-token")))
            agent = NetworkAgent(config: config)
        }

        func stop() {
            api.stop()
            thirdParty.stop()
        }

        func sentAuthorization(_ request: Echo) async throws -> String? {
            let echo = try await agent.response(request)
            let headers = try #require(echo.jsonObject as? [String: Any])["headers"] as? [String: String]
            return headers?["Authorization"]
        }
    }

    @Test func theAppsOwnAPIGetsTheCredential() async throws {
        let setup = Setup()
        defer { setup.stop() }
        #expect(try await setup.sentAuthorization(Echo()) == "Bearer app-token")
        #expect(try await setup.sentAuthorization(Echo(url: setup.api.baseURL + "/headers")) == "Bearer app-token")
    }

    @Test func aRequestWithItsOwnBaseURLElsewhereDoesNot() async throws {
        let setup = Setup()
        defer { setup.stop() }
        #expect(try await setup.sentAuthorization(Echo(baseUrl: setup.thirdParty.baseURL)) == nil)
        #expect(try await setup.sentAuthorization(Echo(url: setup.thirdParty.baseURL + "/headers")) == nil)
    }

    @Test func aThirdPartys401RefreshesNothing() async throws {
        let setup = Setup()
        defer { setup.stop() }
        await #expect(throws: ErrandError.statusCode(401)) {
            try await setup.agent.response(Echo(baseUrl: setup.thirdParty.baseURL, url: "/status/401"))
        }
        #expect(setup.authenticator.refreshCount == 0)
        #expect(setup.thirdParty.receivedRequests(path: "/status/401").count == 1)
    }

    @Test func theCDNsOriginIsTheAppsToo() async throws {
        let setup = Setup()
        defer { setup.stop() }
        setup.agent.config.cdnUrl = setup.thirdParty.baseURL
        #expect(try await setup.sentAuthorization(Echo(baseUrl: setup.thirdParty.baseURL)) == "Bearer app-token")
    }

    @Test func anAuthenticatorMayWidenTheScope() async throws {
        let setup = Setup(extraOrigins: true)
        defer { setup.stop() }
        #expect(try await setup.sentAuthorization(Echo(baseUrl: setup.thirdParty.baseURL)) == "Bearer app-token")
    }

    @Test func originsDifferBySchemeHostAndPortButNotByDefaultPort() {
        typealias A = CountingAuthenticator
        let url = { (text: String) in URL(string: text)! }
        #expect(A.isSameOrigin(url("https://api.example.com"), url("https://API.example.com:443/v1/x?y")))
        #expect(A.isSameOrigin(url("http://api.example.com/v2"), url("http://api.example.com:80/")))
        #expect(!A.isSameOrigin(url("https://api.example.com"), url("http://api.example.com")))
        #expect(!A.isSameOrigin(url("https://api.example.com"), url("https://api.example.com:8443")))
        #expect(!A.isSameOrigin(url("https://api.example.com"), url("https://api.example.com.evil.test")))
    }
}
