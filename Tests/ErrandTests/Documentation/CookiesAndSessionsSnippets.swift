// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

/// The code the article "Cookies and sessions" shows, compiled (DocumentedCodeTests checks each snippet is the article's).
enum CookiesAndSessionsSnippets {
    // snippet: CookiesAndSessions.md
    struct AvatarApi: BaseRequest {
        var url: String { "/avatar" }
        var usesCookies: Bool { false }
    }
    // end snippet

    struct LoginApi: BaseRequest {
        let user: String
        let password: String
        var url: String { "/login" }
        var method: HTTPMethod { .post }
        var arguments: [String: any Sendable]? { ["user": user, "password": password] }
    }

    // snippet: CookiesAndSessions.md
    struct TokenApi: BaseRequest {
        var url: String { "/auth/token" }
        var method: HTTPMethod { .post }
        var usesConfigInterceptors: Bool { false }  // not authenticated with the token it renews
    }
    // end snippet

    static func persisting() throws {
        // snippet: README.md
        NetworkConfig.shared.cookieJar = try CookieJar(fileURL: URL(fileURLWithPath: "/var/lib/my-tool/cookies.json"))
        // end snippet
        // snippet: CookiesAndSessions.md
        NetworkConfig.shared.cookieJar = try CookieJar(fileURL: URL(fileURLWithPath: "/var/lib/my-tool/cookies.json"))
        // end snippet
    }

    static func reading() {
        // snippet: CookiesAndSessions.md
        let jar = NetworkConfig.shared.cookieJar
        let sent = jar.cookies(for: URL(string: "https://api.example.com/v1/")!)  // in the order they go out
        jar.removeCookies(forDomain: "example.com")  // example.com's and its subdomains'
        jar.removeAll()
        // end snippet
        _ = sent
    }

    static func signingIn(store: AccountStore<AccessToken>, password: String) async throws {
        // snippet: CookiesAndSessions.md
        let token = try AccessToken(tokenResponse: try await LoginApi(user: "ann", password: password).response())
        try store.signIn(token, for: "ann", movingCookiesFrom: NetworkConfig.shared.cookieJar)
        // end snippet
    }

    static func loggingInAgain() throws {
        // snippet: CookiesAndSessions.md
        let store = try AccountStore<AccessToken>()
        let authenticator = SessionCookieAuthenticator { TokenApi() }
        NetworkConfig.shared.addInterceptor(AuthenticationInterceptor(authenticator: authenticator, store: store))
        // end snippet
    }
}
