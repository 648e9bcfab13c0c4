// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
// The tests the article "Testing your API layer" shows, run as written (DocumentedCodeTests
// checks each snippet is the article's). Its recording is Recordings/user-info.har.
// snippet: TestingYourAPILayer.md
import Errand
import Foundation
import Testing
// end snippet

@Suite("Documentation: testing your API layer")
struct TestingYourAPILayerSnippets {
    struct GetUserInfoApi: BaseRequest {
        let userId: String
        var url: String { "/users/info" }
        var arguments: [String: any Sendable]? { ["userId": userId] }
        var jsonValidator: JSONValidator? { ["nick": .string, "level": .number] }
    }
    struct User: Decodable { let nick: String }

    // snippet: TestingYourAPILayer.md
    let recording = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().appendingPathComponent("Recordings/user-info.har")

    @Test func userInfoDecodes() async throws {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        // Records what is missing while RECORD is set; otherwise a missing exchange fails the test.
        let miss: ReplayMiss = ProcessInfo.processInfo.environment["RECORD"] != nil
            ? .record(via: URLSessionTransport(), into: recording) : .fail
        let agent = NetworkAgent(config: config, transport: try ReplayTransport(har: recording, onMissing: miss))
        let user = try await agent.decoded(GetUserInfoApi(userId: "42"), User.self)
        #expect(user.nick == "ann")
    }
    // end snippet

    @Test func theRecordingAlsoReplaysComparingBodies() async throws {
        let miss = ReplayMiss.fail
        // snippet: TestingYourAPILayer.md
        let replay = try ReplayTransport(har: recording, matching: .methodURLAndBody, onMissing: miss)
        // end snippet
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        let stub = replay
        // snippet: TestingYourAPILayer.md
        let agent = NetworkAgent(config: config, transport: stub)
        // end snippet
        #expect(try await agent.decoded(GetUserInfoApi(userId: "42"), User.self).nick == "ann")
    }

    @Test func anAgentOfItsOwn() throws {
        let stub = StubTransport { _ in Response(statusCode: 200) }
        // snippet: TestingYourAPILayer.md
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        config.callbackQueue = DispatchQueue(label: "tests")
        let agent = NetworkAgent(config: config, transport: stub)
        // end snippet
        #expect(try agent.buildRequestUrl(GetUserInfoApi(userId: "42")).absoluteString == "https://api.example.com/users/info")
    }

    @Test func offlineAndValue() async throws {
        // snippet: TestingYourAPILayer.md
        let offline = NetworkAgent(transport: StubTransport { _ throws(ErrandError) in
            throw .transport(URLError(.notConnectedToInternet))
        })
        // end snippet
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        let agent = NetworkAgent(config: config, transport: StubTransport { _ in
            Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8))
        })
        // snippet: TestingYourAPILayer.md
        let task = agent.start(GetUserInfoApi(userId: "42"))
        let response = try await task.value
        // end snippet
        #expect(response.statusCode == 200)
        _ = offline
    }

    // snippet: TestingYourAPILayer.md
    struct Token: AuthenticationCredential {
        let access: String
        var requiresRefresh: Bool { false }   // refreshed only after a 401
    }

    actor RefreshCounter {
        private(set) var count = 0
        func increment() { count += 1 }
    }

    struct CountingAuthenticator: Authenticator {
        let refreshes: RefreshCounter
        func apply(_ token: Token, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(token.access)"
        }
        func refresh(_ token: Token) async throws(ErrandError) -> Token {
            await refreshes.increment()
            return Token(access: "fresh")
        }
    }

    struct ItemApi: BaseRequest {
        let id: Int
        var url: String { "/items/\(id)" }   // a URL of its own: identical GETs share one call
    }

    @Test func concurrent401sCauseOneRefresh() async throws {
        let refreshes = RefreshCounter()
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        config.addInterceptor(AuthenticationInterceptor(
            authenticator: CountingAuthenticator(refreshes: refreshes), credential: Token(access: "expired")))
        // Answers take 50 ms, so every request is in flight before the first 401 arrives.
        let agent = NetworkAgent(config: config, transport: StubTransport(latency: 0.05) { request in
            request.value(forHeader: "Authorization") == "Bearer fresh"
                ? Response(statusCode: 200, data: Data("{}".utf8))
                : Response(statusCode: 401)
        })
        agent.maxConcurrentRequests = 20

        let tasks = (0..<20).map { agent.start(ItemApi(id: $0)) }
        for task in tasks {
            #expect(try await task.value.statusCode == 200)
        }
        #expect(await refreshes.count == 1)
    }
    // end snippet
}

/// The article's stub test reads NetworkConfig.shared, whose base URL the suite leaves empty, as
/// the article says; DocumentationSnippetTests runs the same stub on an agent of its own.
@Suite("Documentation: a stub test on the shared configuration", .disabled("it reads NetworkConfig.shared"))
struct TestingWithTheSharedConfiguration {
    typealias GetUserInfoApi = TestingYourAPILayerSnippets.GetUserInfoApi
    typealias User = TestingYourAPILayerSnippets.User

    // snippet: TestingYourAPILayer.md
    @Test func userInfoDecodesFromAStub() async throws {
        let agent = NetworkAgent(transport: StubTransport { request in
            #expect(request.method == "GET")
            #expect(request.url.query == "userId=42")
            return Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8))
        })
        let user = try await agent.decoded(GetUserInfoApi(userId: "42"), User.self)
        #expect(user.nick == "ann")
    }
    // end snippet
}
