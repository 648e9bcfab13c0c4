// SessionCookies: a log-in form's session cookie, kept per account across a restart, renews an
// expired access token with no password stored.
//
//     swift run SessionCookies                            # against the embedded loopback server
//     swift run SessionCookies --base-url http://host:80  # against a server with Errand's /session endpoints
//
// Ann logs in once; the server answers an access token and sets a `session` cookie, which the
// account store keeps in Ann's own cookie jar on disk. The server then expires every access
// token; the next request is refused, SessionCookieAuthenticator sends the token request with
// the session cookie, and the request goes through with the new token. A second "launch" —
// a new store and agent reading the same folder — does it again from the saved cookie. After
// sign-out the cookie is gone, and renewing fails: time for the log-in form.

import Errand
import ErrandTestServer
import Foundation

struct LoginApi: BaseRequest {
    var url: String { "/session/login" }
    var method: HTTPMethod { .post }
    var arguments: [String: any Sendable]? { ["username": "ann", "password": "s3cret"] }
    var usesConfigInterceptors: Bool { false }
}

/// Answers a new access token for the session cookie.
struct TokenApi: BaseRequest {
    var url: String { "/session/token" }
    var method: HTTPMethod { .post }
    var usesConfigInterceptors: Bool { false }
}

struct ExpireTokensApi: BaseRequest {
    var url: String { "/auth/expire" }
    var method: HTTPMethod { .post }
    var usesConfigInterceptors: Bool { false }
}

struct ProfileApi: BaseRequest {
    var url: String { "/auth/protected/profile" }
    var jsonValidator: JSONValidator? { ["authenticated": .bool] }
}

@main
enum SessionCookies {
    static func main() async {
        do {
            try await run(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            print("SessionCookies failed: \(error)")
            exit(1)
        }
    }

    /// An agent of its own, as an app has after a launch, whose requests are the store's accounts'.
    static func launch(_ baseURL: String, folder: URL) throws -> (AccountStore<AccessToken>, NetworkAgent) {
        let store = try AccountStore<AccessToken>(directory: folder)
        let config = NetworkConfig()
        config.baseUrl = baseURL
        config.callbackQueue = DispatchQueue(label: "session-cookies")
        let agent = NetworkAgent(config: config)
        let authenticator = SessionCookieAuthenticator(agent: agent) { TokenApi() }
        config.addInterceptor(AuthenticationInterceptor(authenticator: authenticator, store: store))
        return (store, agent)
    }

    static func run(arguments: [String]) async throws {
        let server = try ExampleServer(arguments: arguments)
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "session-cookies-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }

        let (store, agent) = try launch(server.baseURL, folder: folder)
        let token = try AccessToken(tokenResponse: try await agent.response(LoginApi()))
        try store.signIn(token, for: "ann", movingCookiesFrom: agent.config.cookieJar)
        let jar = try store.cookieJar(for: "ann")
        print("Ann logged in; her jar holds \(jar.allCookies.map(\.name)).")

        _ = try await agent.response(ExpireTokensApi())
        print("The server expired every access token.")
        _ = try await agent.response(ProfileApi())
        print(
            "Her profile loaded: the token was renewed with the session cookie (\(store.credential(for: "ann")?.value ?? "none"))."
        )

        let (relaunched, secondAgent) = try launch(server.baseURL, folder: folder)
        _ = try await secondAgent.response(ExpireTokensApi())
        _ = try await secondAgent.response(ProfileApi())
        print(
            "After a restart, the saved cookie renewed it again (\(relaunched.credential(for: "ann")?.value ?? "none"))."
        )

        await relaunched.signOut("ann", agent: secondAgent)
        try relaunched.signIn(AccessToken(value: "stale"), for: "ann")
        do {
            _ = try await secondAgent.response(ProfileApi())
            throw ErrandError.serialization("the profile loaded after sign-out")
        } catch ErrandError.statusCode(401) {
            print("After sign-out her cookies are gone: renewing fails with 401, so the app shows its log-in form.")
        }
    }
}
