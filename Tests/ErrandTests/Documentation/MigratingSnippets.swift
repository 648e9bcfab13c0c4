// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation
import Testing

private func show<T>(_ value: T) {}

/// The code the article "Migrating from YTKNetwork" shows, compiled (DocumentedCodeTests checks
/// each snippet is the article's), and what it says of a YTKNetwork-named override, checked.
@Suite("Documentation: migrating from YTKNetwork")
struct MigratingSnippets {
    /// A port that keeps YTKNetwork's `chainRequestFailed:failedBaseRequest:` beside the real method.
    final class PortedSignUp: ChainRequestDelegate {
        func chainRequestFinished(_ task: ChainTask) {}
        func chainRequestFailed(_ task: ChainTask) {}
        // snippet: MigratingFromYTKNetwork.md
        func chainRequestFailed(_ chainRequest: ChainTask, failedBaseRequest request: RequestTask) {}
        // end snippet
    }

    /// An override spelled as in YTKNetwork: it compiles, and Errand never calls it.
    struct PortedUserInfoApi: BaseRequest {
        // snippet: MigratingFromYTKNetwork.md
        func requestUrl() -> String { "/users/info" }
        // end snippet
    }

    @Test func anOverrideSpelledAsInYTKNetworkIsNeverCalled() throws {
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200) }, baseUrl: "https://api.example.com/v1")
        #expect(PortedUserInfoApi().url == "")
        #expect(try agent.buildRequestUrl(PortedUserInfoApi()).absoluteString == "https://api.example.com/v1/")
    }

    struct GetUserInfoApi: BaseRequest {
        let userId: String
        var url: String { "/users/info" }
        var cacheTimeInSeconds: Int { 60 }
    }

    static func cacheCalls(data: Data) async throws {
        // snippet: MigratingFromYTKNetwork.md
        let request = GetUserInfoApi(userId: "42")
        try await request.saveCache(Response(statusCode: 200, data: data))   // -saveResponseDataToCacheFile:
        let cached = try request.loadCache()                                 // -loadCacheWithError:
        let task = request.startWithoutCache(success: { task in show(task) }) // -startWithoutCache
        try await request.removeCache()
        // end snippet
        _ = (cached, task)
    }

    // snippet: MigratingFromYTKNetwork.md
    final class SignUpViewController: ChainRequestDelegate {
        var message = ""

        func chainRequestFinished(_ task: ChainTask) { message = "signed up" }

        // YTKNetwork: - (void)chainRequestFailed:(YTKChainRequest *)chainRequest
        //                       failedBaseRequest:(YTKBaseRequest *)request
        func chainRequestFailed(_ task: ChainTask) {
            let failed = task.failedTask   // nil when the chain was cancelled before a step failed
            message = failed?.error?.description ?? "cancelled"
        }
    }
    // end snippet

    struct LoginApi: BaseRequest {
        let name: String
        let password: String
        var url: String { "/login" }
        var method: HTTPMethod { .post }
    }
    struct ProfileApi: BaseRequest {
        let token: String
        var url: String { "/profile" }
    }

    static func chain() {
        // snippet: MigratingFromYTKNetwork.md
        var chain = ChainRequest()
        chain.add(LoginApi(name: "ann", password: "s3cret")) { chain, login in
            chain.add(ProfileApi(token: login.responseString ?? ""))
        }
        chain.start(success: { chain in show(chain.tasks.last) }, failure: { chain in show(chain.error) })
        // end snippet
    }
}
