import Errand
import Foundation
import Testing

/// From "Concurrency": a main-actor model awaiting from a `Task`; `error` is an `ErrandError`.
@MainActor
final class AwaitingProfileModel {
    var name = ""
    var errorText: String?

    func load(with agent: NetworkAgent) async {
        let loading = Task {
            do throws(ErrandError) {
                name = try await agent.decoded(
                    DocumentationSnippetTests.GetUserInfoApi(userId: "42"), DocumentationSnippetTests.User.self
                ).nick
            } catch {
                errorText = error.description
            }
        }
        await loading.value
    }
}

/// The code the DocC articles show, compiled and run against stubs, so the articles stay true.
@Suite("Documentation snippets")
struct DocumentationSnippetTests {
    struct User: Decodable {
        let nick: String
        let level: Int
    }

    struct GetUserInfoApi: BaseRequest {
        let userId: String
        var url: String { "/users/info" }
        var arguments: [String: any Sendable]? { ["userId": userId] }
        var jsonValidator: JSONValidator? { ["nick": .string, "level": .number] }
    }

    /// From "Configuration and test servers".
    struct ChannelFilter: URLFilter {
        let channel: String
        func filterUrl(_ originUrl: String, request: any BaseRequest) -> String {
            originUrl + (originUrl.contains("?") ? "&" : "?") + "channel=\(channel)"
        }
    }

    func agent(_ respond: @escaping StubTransport.Responder) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        config.callbackQueue = DispatchQueue(label: "snippets")
        return NetworkAgent(config: config, transport: StubTransport(respond: respond))
    }

    /// From "Testing your API layer".
    @Test func stubTransportSeesTheRequestAsSent() async throws {
        let agent = agent { request in
            #expect(request.method == "GET")
            #expect(request.url.query == "userId=42")
            return Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8))
        }
        let user = try await agent.decoded(GetUserInfoApi(userId: "42"), User.self)
        #expect(user.nick == "ann")
        let task = agent.start(GetUserInfoApi(userId: "42"))
        #expect(try await task.value.statusCode == 200)
    }

    /// From "Validation and errors": typed throws, a case pattern in `catch`, a switch in the rest.
    @Test func typedThrowsSwitchesWithoutCasts() async {
        func outcome(of agent: NetworkAgent) async -> String {
            do {
                let user = try await agent.decoded(GetUserInfoApi(userId: "42"), User.self)
                return "user \(user.nick)"
            } catch .statusCode(404) {
                return "not found"
            } catch {
                switch error {
                case .transport, .timedOut: return "offline"
                case .cancelled: return "cancelled"
                case .api(let apiError): return apiError.message
                default: return error.description
                }
            }
        }
        #expect(await outcome(of: agent { _ in Response(statusCode: 404, data: Data("<html>".utf8)) }) == "not found")
        #expect(
            await outcome(of: agent { _ throws(ErrandError) in throw .transport(URLError(.notConnectedToInternet)) })
                == "offline")
        #expect(
            await outcome(of: agent { _ in Response(statusCode: 200, data: Data(#"{"nick":"ann"}"#.utf8)) })
                == "JSON validation failed at $.level: expected number, found missing")
    }

    /// From "Configuration and test servers": the URL without the arguments, and a filter.
    @Test func buildRequestUrlLeavesOutTheArgumentsAndFiltersRun() async throws {
        let agent = agent { request in
            #expect(request.url.absoluteString == "https://api.example.com/users/info?channel=appstore&userId=42")
            return Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8))
        }
        #expect(
            try agent.buildRequestUrl(GetUserInfoApi(userId: "42")).absoluteString
                == "https://api.example.com/users/info")
        agent.config.addUrlFilter(ChannelFilter(channel: "appstore"))
        _ = try await agent.response(GetUserInfoApi(userId: "42"))
    }

    @Test @MainActor func aMainActorModelAwaitsFromATask() async {
        let model = AwaitingProfileModel()
        await model.load(with: agent { _ in Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8)) })
        #expect(model.name == "ann")
        await model.load(with: agent { _ in Response(statusCode: 500) })
        #expect(model.errorText == "Unacceptable HTTP status code 500")
    }

    /// From "Migrating from YTKNetwork": a batch with `async let`.
    @Test func asyncLetRunsRequestsTogether() async throws {
        let agent = agent { _ in Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8)) }
        async let first = agent.response(GetUserInfoApi(userId: "1"))
        async let second = agent.response(GetUserInfoApi(userId: "2"))
        let (one, two) = try await (first, second)
        #expect(one.statusCode == 200 && two.statusCode == 200)
    }
}

/// A file URL in a fresh temporary folder that does not exist yet.
private func missingFolder() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("errand-snippets-\(UUID().uuidString)")
}

extension DocumentationSnippetTests {
    /// From "Caching responses": the async overloads, picked by `await`.
    @Test func signingOutClearsTheAccountsFolder() async throws {
        struct FeedApi: BaseRequest {
            var url: String { "/feed" }
            var cacheTimeInSeconds: Int { 300 }
        }
        func signOut(agent: NetworkAgent, account: URL) async {
            await agent.clearCache(in: account)
            await agent.waitForCacheWrites()
        }
        let agent = agent { _ in Response(statusCode: 200, data: Data("{}".utf8)) }
        agent.config.cacheDirectory = missingFolder()
        defer { try? FileManager.default.removeItem(at: agent.config.cacheDirectory) }
        _ = try await agent.response(FeedApi())
        await agent.waitForCacheWrites()
        #expect(try agent.loadCache(FeedApi()).isDataFromCache)
        await signOut(agent: agent, account: agent.config.cacheDirectory)
        #expect(throws: ErrandError.cacheMiss(.missing)) { try agent.loadCache(FeedApi()) }
    }
}
