// TokenRefresh: an expired access token is refreshed once, for twenty requests in flight.
//
//     swift run TokenRefresh                            # against the embedded loopback server
//     swift run TokenRefresh --base-url http://host:80  # against a server with Errand's /auth endpoints
//
// The app logs in, installs an AuthenticationInterceptor and a RetryPolicy on the shared
// configuration, and sends twenty requests at once. The server expires every access token
// while they are in flight: each refused request waits for the one refresh, then is sent again
// with the new token. None of the callers notices; the server counts one refresh.

import Errand
import ErrandTestServer
import Foundation

/// An access token and the refresh token that renews it.
struct Token: AuthenticationCredential {
    let access: String
    let refresh: String
    var requiresRefresh: Bool { false }

    init(_ response: Response) throws(ErrandError) {
        let body = response.jsonObject as? [String: Any]
        guard let access = body?["access_token"] as? String, let refresh = body?["refresh_token"] as? String else {
            throw .serialization("the server sent no token pair")
        }
        self.access = access
        self.refresh = refresh
    }
}

struct LoginApi: BaseRequest {
    var url: String { "/auth/login" }
    var method: HTTPMethod { .post }
    var arguments: [String: any Sendable]? { ["username": "ann", "password": "s3cret"] }
    var usesConfigInterceptors: Bool { false }
}

/// Opts out of the config's interceptors: it must not wait for the refresh it performs.
struct RefreshApi: BaseRequest {
    let refreshToken: String
    // A slow refresh, so that the other requests arrive while it runs.
    var url: String { "/auth/refresh?delay_ms=300" }
    var method: HTTPMethod { .post }
    var arguments: [String: any Sendable]? { ["refresh_token": refreshToken] }
    var usesConfigInterceptors: Bool { false }
}

struct ExpireTokensApi: BaseRequest {
    var url: String { "/auth/expire" }
    var method: HTTPMethod { .post }
    var usesConfigInterceptors: Bool { false }
}

struct StatsApi: BaseRequest {
    var url: String { "/auth/stats" }
    var usesConfigInterceptors: Bool { false }
}

struct ProfileApi: BaseRequest {
    let id: Int
    // The server checks the token after 200 ms, so the expiry lands while every request is in flight.
    var url: String { "/auth/protected/profiles/\(id)?delay_ms=200" }
    var jsonValidator: JSONValidator? { ["authenticated": .bool] }
}

struct TokenAuthenticator: Authenticator {
    func apply(_ credential: Token, to request: inout TransportRequest) {
        request.headers["Authorization"] = "Bearer \(credential.access)"
    }

    func refresh(_ credential: Token) async throws(ErrandError) -> Token {
        print("  refreshing the access token…")
        return try Token(try await RefreshApi(refreshToken: credential.refresh).response())
    }
}

@main
enum TokenRefresh {
    static func main() async {
        do {
            try await run(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            print("TokenRefresh failed: \(error)")
            exit(1)
        }
    }

    static func run(arguments: [String]) async throws {
        let config = NetworkConfig.shared
        let server = try ExampleServer(arguments: arguments)
        config.baseUrl = server.baseURL
        defer { server.stop() }

        let token = try Token(try await LoginApi().response())
        print("Logged in; access token \(token.access).")
        let authentication = AuthenticationInterceptor(authenticator: TokenAuthenticator(), credential: token)
        config.addInterceptor(authentication)
        config.addInterceptor(RetryPolicy())
        NetworkAgent.shared.maxConcurrentRequests = 20

        let refreshesBefore = try await refreshCount()
        print("Sending 20 requests; the server expires every access token while they are in flight.")
        let expiry = Task {
            try await Task.sleep(nanoseconds: 50_000_000)
            _ = try await ExpireTokensApi().response()
        }
        let outcomes = await withTaskGroup(of: (Int, Result<Response, ErrandError>).self) { group in
            for id in 1...20 {
                group.addTask {
                    do throws(ErrandError) {
                        return (id, .success(try await ProfileApi(id: id).response()))
                    } catch {
                        return (id, .failure(error))
                    }
                }
            }
            return await group.reduce(into: [(Int, Result<Response, ErrandError>)]()) { $0.append($1) }
        }
        _ = try? await expiry.value
        let failures = outcomes.filter { if case .failure = $0.1 { true } else { false } }
        let refreshes = try await refreshCount() - refreshesBefore
        print("\(outcomes.count - failures.count) of 20 succeeded; the server counted \(refreshes) refresh(es).")
        print("Access token now \(authentication.credential?.access ?? "none").")
        for (id, outcome) in failures { print("  request \(id) failed: \(outcome)") }
        guard failures.isEmpty, refreshes <= 1 else { throw ErrandError.statusCode(401) }
    }

    static func refreshCount() async throws(ErrandError) -> Int {
        let stats = try await StatsApi().response().jsonObject as? [String: Any]
        return (stats?["refreshes"] as? Int) ?? 0
    }
}
