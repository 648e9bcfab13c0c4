// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

/// The code the article "Accounts" shows, compiled (DocumentedCodeTests checks each snippet is the article's).
enum AccountsSnippets {
    struct Token: AuthenticationCredential, Codable {
        let access: String
        var requiresRefresh: Bool { false }
    }

    struct TokenAuthenticator: Authenticator {
        func apply(_ token: Token, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(token.access)"
        }
        func refresh(_ token: Token) async throws(ErrandError) -> Token { token }
    }

    struct LoginApi: BaseRequest {
        let user: String
        var url: String { "/login" }
        var method: HTTPMethod { .post }
        var arguments: [String: any Sendable]? { ["user": user] }
    }

    struct FeedApi: BaseRequest {
        var url: String { "/feed" }
        var cacheTimeInSeconds: Int { 300 }
    }

    static func signingInAndOut(uploads: NetworkAgent) async throws {
        // snippet: Accounts.md
        let store = try AccountStore<Token>()
        NetworkConfig.shared.addInterceptor(AuthenticationInterceptor(authenticator: TokenAuthenticator(), store: store))
        NetworkConfig.shared.addCacheDirPathFilter(AccountCacheDirPathFilter(store: store))

        // After a log-in: Ann's credential is saved and requests started from now on are hers.
        try store.signIn(try await LoginApi(user: "ann").decoded(Token.self), for: "ann")
        // A second user signs in on the same device: from now on, Bob's.
        try store.signIn(try await LoginApi(user: "bob").decoded(Token.self), for: "bob")
        // Switching back needs no new log-in: the store kept Ann's credential.
        store.current = "ann"
        // Signing out: Ann's credential, cached responses and requests in flight go; the first account
        // left becomes current.
        await store.signOut("ann")
        // end snippet
        // snippet: Accounts.md
        let workStore = try AccountStore<Token>(name: "work", directory: URL(fileURLWithPath: "/var/lib/my-tool"))
        // end snippet
        // snippet: Accounts.md
        await store.signOut("ann", agent: uploads)   // an agent of its own, besides NetworkAgent.shared
        await store.signOutAll()
        // end snippet
        _ = workStore
    }

    static func keepingFresh() {
        // snippet: Accounts.md
        let feedKeeper = NetworkAgent.shared.keepFresh(FeedApi(), every: 30)
        // … and when the screen that shows the feed is gone:
        feedKeeper.cancel()
        // end snippet
    }
}
