import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Each account's cookies: kept apart, kept across a restart, gone at sign-out, and sent by a
/// refresh that logs in again with the account's session cookie.
@Suite("Accounts: cookies")
struct AccountCookieTests {
    /// An access token that is stale or not; a stale one is refreshed before it is sent.
    struct SessionToken: AuthenticationCredential, Codable, Equatable {
        var access: String
        var isStale = false
        var requiresRefresh: Bool { isStale }
    }

    /// Logs in again with the session cookie: the server's `/cookies` echoes the cookies the
    /// refresh sent, and the new token is made from the session cookie among them.
    struct CookieLogin: Authenticator {
        let agent: Locked<NetworkAgent?>

        func apply(_ credential: SessionToken, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(credential.access)"
        }

        func refresh(_ credential: SessionToken) async throws(ErrandError) -> SessionToken {
            guard let agent = agent.withLock({ $0 }) else { throw .cancelled }
            let cookies = try await agent.response(Echo(path: "/cookies", isAuthenticated: false)).object["cookies"]
            guard let session = (cookies as? [String: String])?["session"] else { throw .statusCode(401) }
            return SessionToken(access: "from-\(session)")
        }
    }

    struct Echo: BaseRequest {
        var path: String
        var isAuthenticated = true
        var url: String { path }
        var usesConfigInterceptors: Bool { isAuthenticated }
    }

    /// A response that sets `cookie` (`name=value; attributes`) for the whole server.
    static func setting(_ cookie: String) -> Echo {
        let encoded = cookie.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cookie
        return Echo(path: "/response-headers?Set-Cookie=\(encoded)")
    }

    let server: TestServer
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "errand-account-cookies-\(UUID().uuidString)")

    init() throws {
        server = try TestServer()
    }

    private func agent(store: AccountStore<SessionToken>) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.cacheDirectory = directory.appendingPathComponent("cache")
        let box = Locked<NetworkAgent?>(nil)
        config.addInterceptor(AuthenticationInterceptor(authenticator: CookieLogin(agent: box), store: store))
        let agent = NetworkAgent(config: config)
        box.withLock { $0 = agent }
        return agent
    }

    private func sentCookies(_ agent: NetworkAgent) async throws -> [String: String] {
        try await agent.response(Echo(path: "/cookies")).object["cookies"] as? [String: String] ?? [:]
    }

    @Test func eachAccountSendsOnlyItsOwnCookies() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try AccountStore<SessionToken>(directory: directory)
        let agent = agent(store: store)
        try store.signIn(SessionToken(access: "a"), for: "ann")
        _ = try await agent.response(Self.setting("session=ann; Max-Age=600"))
        try store.signIn(SessionToken(access: "b"), for: "bob")
        #expect(try await sentCookies(agent) == [:], "Bob does not get Ann's cookie")
        _ = try await agent.response(Self.setting("session=bob"))
        store.current = "ann"
        #expect(try await sentCookies(agent) == ["session": "ann"])
        #expect(agent.config.cookieJar.isEmpty, "the configuration's jar holds no account's cookie")
    }

    @Test func anAccountsCookiesSurviveARestartAndGoAtSignOut() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try AccountStore<SessionToken>(directory: directory)
        let first = agent(store: store)
        try store.signIn(SessionToken(access: "a"), for: "ann")
        _ = try await first.response(Self.setting("session=ann; Max-Age=600"))
        _ = try await first.response(Self.setting("tab=1"))

        let restarted = try AccountStore<SessionToken>(directory: directory)
        let second = agent(store: restarted)
        #expect(
            try await sentCookies(second) == ["session": "ann"], "the session cookie of the tab stayed in the process")
        let file = directory.appendingPathComponent("default.cookies/account-ann.json")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        await restarted.signOut("ann", agent: second)
        #expect(!FileManager.default.fileExists(atPath: file.path))
        try restarted.signIn(SessionToken(access: "a2"), for: "ann")
        #expect(try await sentCookies(second) == [:])
        #expect(try AccountStore<SessionToken>(directory: directory).cookieJar(for: "ann").isEmpty)
    }

    @Test func aStoreThatKeepsSessionCookiesSavesThem() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try AccountStore<SessionToken>(directory: directory, keepsSessionCookies: true)
        try store.signIn(SessionToken(access: "a"), for: "ann")
        _ = try await agent(store: store).response(Self.setting("tab=1"))
        let restarted = try AccountStore<SessionToken>(directory: directory, keepsSessionCookies: true)
        #expect(try await sentCookies(agent(store: restarted)) == ["tab": "1"])
    }

    @Test func aStaleTokenIsRefreshedByLoggingInAgainWithTheAccountsSessionCookie() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try AccountStore<SessionToken>(directory: directory)
        let agent = agent(store: store)
        try store.signIn(SessionToken(access: "a"), for: "ann")
        _ = try await agent.response(Self.setting("session=ann-session; Max-Age=600"))
        try store.signIn(SessionToken(access: "b"), for: "bob")
        _ = try await agent.response(Self.setting("session=bob-session; Max-Age=600"))

        try store.save(SessionToken(access: "a", isStale: true), for: "ann")
        store.current = "ann"
        let headers = try await agent.response(Echo(path: "/headers")).object["headers"] as? [String: String]
        #expect(headers?["Authorization"] == "Bearer from-ann-session")
        #expect(store.credential(for: "ann") == SessionToken(access: "from-ann-session"))
    }

    @Test func signingInCanTakeTheCookiesTheLogInLeftInTheConfigurationsJar() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try AccountStore<SessionToken>(directory: directory)
        let agent = agent(store: store)
        _ = try await agent.response(Self.setting("session=new; Max-Age=600"))
        #expect(!agent.config.cookieJar.isEmpty, "with no account yet, the log-in's cookie is the configuration's")
        try store.signIn(SessionToken(access: "a"), for: "ann", movingCookiesFrom: agent.config.cookieJar)
        #expect(agent.config.cookieJar.isEmpty)
        #expect(try await sentCookies(agent) == ["session": "new"])
    }

    @Test func sessionCookieAuthenticatorRenewsAnExpiredTokenWithTheAccountsSessionCookie() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try AccountStore<AccessToken>(directory: directory)
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.cacheDirectory = directory.appendingPathComponent("cache")
        let agent = NetworkAgent(config: config)
        // The server's /cookies answers the cookies it got: the new token is made from the session one.
        let authenticator = SessionCookieAuthenticator(
            agent: agent, tokenRequest: { Echo(path: "/cookies", isAuthenticated: false) }
        ) {
            response throws(ErrandError) in
            guard let session = (response.jsonObject as? [String: Any])?["cookies"] as? [String: String],
                let value = session["session"]
            else { throw .statusCode(401) }
            return AccessToken(value: "from-\(value)", expiresAt: Date().addingTimeInterval(3600))
        }
        config.addInterceptor(AuthenticationInterceptor(authenticator: authenticator, store: store))
        try store.signIn(AccessToken(value: "first"), for: "ann")
        _ = try await agent.response(Self.setting("session=ann-session; Max-Age=600"))

        try store.save(AccessToken(value: "first", expiresAt: Date().addingTimeInterval(-1)), for: "ann")
        let headers = try await agent.response(Echo(path: "/headers")).object["headers"] as? [String: String]
        #expect(headers?["Authorization"] == "Bearer from-ann-session")
        #expect(store.credential(for: "ann")?.value == "from-ann-session")

        try store.signIn(AccessToken(value: "b", expiresAt: Date().addingTimeInterval(-1)), for: "bob")
        await #expect(throws: ErrandError.statusCode(401), "Bob has no session cookie: he must log in") {
            _ = try await agent.response(Echo(path: "/headers"))
        }
    }

    @Test func aTokenRequestThroughTheConfigurationsInterceptorsFailsSayingWhy() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try AccountStore<AccessToken>(directory: directory)
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        let agent = NetworkAgent(config: config)
        let authenticator = SessionCookieAuthenticator(agent: agent, tokenRequest: { Echo(path: "/cookies") })
        config.addInterceptor(AuthenticationInterceptor(authenticator: authenticator, store: store))
        try store.signIn(AccessToken(value: "old", expiresAt: .distantPast), for: "ann")
        await #expect {
            _ = try await agent.response(Echo(path: "/headers"))
        } throws: { error in
            guard case .serialization(let message) = error as? ErrandError else { return false }
            return message.contains("usesConfigInterceptors")
        }
    }

    @Test func anOAuthTokenResponseIsRead() throws {
        let body = Data(#"{"access_token":"abc","expires_in":3600,"token_type":"Bearer"}"#.utf8)
        let token = try AccessToken(tokenResponse: Response(statusCode: 200, headers: [:], data: body))
        #expect(token.value == "abc" && !token.requiresRefresh)
        #expect(AccessToken(value: "x", expiresAt: Date().addingTimeInterval(10)).requiresRefresh)
        #expect(throws: ErrandError.self) {
            try AccessToken(tokenResponse: Response(statusCode: 200, headers: [:], data: Data("{}".utf8)))
        }
    }
}
