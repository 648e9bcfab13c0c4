import ErrandScenarios
import Foundation
import Testing

@testable import Errand

/// A refresh only ever starts from the credential that is current: a refresh token is spent once.
@Suite("Token refresh: the current credential only")
struct CredentialRaceTests {
    struct Pair: AuthenticationCredential, Equatable {
        let access: String
        let refresh: String
        var requiresRefresh: Bool { false }
    }

    /// The server's side: which access token it accepts, and refresh tokens that work once.
    final class TokenServer: Sendable {
        private struct State {
            var valid = Pair(access: "A1", refresh: "R1")
            var issued = 1
            var refreshes: [String] = []
        }

        private let state = Locked(State())

        var valid: Pair { state[\.valid] }
        /// The refresh tokens offered, in order, spent or not.
        var refreshes: [String] { state[\.refreshes] }

        /// A new pair for the current refresh token; an older one was spent already.
        func refresh(_ token: String) throws(ErrandError) -> Pair {
            let result = state.withLock { state -> Pair? in
                state.refreshes.append(token)
                guard token == state.valid.refresh else { return nil }
                state.issued += 1
                state.valid = Pair(access: "A\(state.issued)", refresh: "R\(state.issued)")
                return state.valid
            }
            guard let result else { throw .api(APIError(code: "invalid_grant", message: "\(token) was spent")) }
            return result
        }

        func answer(_ request: TransportRequest) -> Response {
            let accepted = request.value(forHeader: "Authorization") == "Bearer \(valid.access)"
            return Response(statusCode: accepted ? 200 : 401, data: Data("{}".utf8))
        }
    }

    /// Applies the pair as a bearer token; `onApply` runs at each application, with its number.
    struct BearerAuthenticator: Authenticator {
        let server: TokenServer
        let onApply: @Sendable (Int) -> Void
        let applications = Locked(0)

        func apply(_ credential: Pair, to request: inout TransportRequest) {
            let count = applications.withLock { count in
                count += 1
                return count
            }
            onApply(count)
            request.headers["Authorization"] = "Bearer \(credential.access)"
        }

        func refresh(_ credential: Pair) async throws(ErrandError) -> Pair {
            try server.refresh(credential.refresh)
        }
    }

    struct Protected: BaseRequest {
        var url: String
    }

    /// The refused request looks at the current credential (the second application) just as
    /// another request's refresh ends: that refresh spent R1 and stored its new pair. The refused
    /// request is resent with the new pair; R1 is never offered again.
    @Test func aRefreshThatEndsWhileARefusedRequestLooksIsNotRepeated() async throws {
        let server = TokenServer()
        let interceptor = Locked<AuthenticationInterceptor<BearerAuthenticator>?>(nil)
        let authenticator = BearerAuthenticator(server: server) { application in
            guard application == 2, let refreshed = try? server.refresh("R1") else { return }
            interceptor.withLock { $0 }?.credential = refreshed
        }
        let auth = AuthenticationInterceptor(
            authenticator: authenticator, credential: Pair(access: "A0", refresh: "R1"))
        interceptor.withLock { $0 = auth }
        let agent = NetworkAgent.testing(StubTransport { server.answer($0) })
        agent.config.addInterceptor(auth)

        let first = await agent.finishedTask(Protected(url: "/first"))
        #expect(first.error == nil, "\(String(describing: first.error))")
        #expect(first.attemptCount == 2)
        #expect(server.refreshes == ["R1"], "R1 was offered again")
        // Nothing sticky: the next request goes through with the current pair.
        let next = await agent.finishedTask(Protected(url: "/next"))
        #expect(next.error == nil, "\(String(describing: next.error))")
        #expect(auth.credential == server.valid)
    }
}
