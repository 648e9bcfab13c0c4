import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// A header field is sent as the caller wrote it, less the whitespace around its value, or the
/// request fails naming it: never sent with the field silently dropped.
@Suite("Header fields with line breaks")
struct HeaderFieldTests {
    struct Echo: BaseRequest {
        var headers: [String: String]
        var url: String { "/headers" }
    }

    /// Sets `Authorization` to a token as read from a file, newline and all.
    struct TokenFromFile: RequestInterceptor {
        let token: String
        func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest {
            var request = request
            request.headers["Authorization"] = "Bearer \(token)"
            return request
        }
    }

    @Test func aValueEndingInANewlineIsSentTrimmed() async throws {
        let fixture = try PipelineFixture()
        let echo = try await fixture.makeAgent().response(
            Echo(headers: ["Authorization": "Bearer x\n", "X-Pad": " \tv "]))
        let headers = try #require(echo.jsonObject as? [String: Any])["headers"] as? [String: String]
        #expect(headers?["Authorization"] == "Bearer x")
        #expect(headers?["X-Pad"] == "v")
    }

    @Test(arguments: ["Bearer x\r\nX-Injected: yes", "Bearer x\nX-Injected: yes", "a\rb", "a\u{0}b", "a\u{2028}b"])
    func aValueWithABreakInsideFailsNamingTheFieldAndIsNotSent(_ value: String) async throws {
        let fixture = try PipelineFixture()
        let agent = fixture.makeAgent()
        await #expect(throws: ErrandError.self) { try await agent.response(Echo(headers: ["Authorization": value])) }
        do {
            _ = try await agent.response(Echo(headers: ["Authorization": value]))
        } catch {
            guard case .serialization(let reason) = error else { throw error }
            #expect(reason.contains("Authorization"))
            #expect(!reason.contains("Bearer") && !reason.contains("X-Injected"), "the value may be a secret")
        }
        #expect(fixture.server.receivedRequests(path: "/headers").isEmpty)
    }

    @Test(arguments: ["X-Bad\r\nName", "X Bad", "", "X-Bad:"])
    func aNameThatIsNotATokenFails(_ name: String) async throws {
        let fixture = try PipelineFixture()
        await #expect(throws: ErrandError.self) {
            try await fixture.makeAgent().response(Echo(headers: [name: "v"]))
        }
        #expect(fixture.server.receivedRequests(path: "/headers").isEmpty)
    }

    @Test func anInterceptorsValueIsCheckedToo() async throws {
        let fixture = try PipelineFixture()
        let agent = fixture.makeAgent()
        agent.config.addInterceptor(TokenFromFile(token: "abc\n"))
        let echo = try await agent.response(Echo(headers: [:]))
        let headers = try #require(echo.jsonObject as? [String: Any])["headers"] as? [String: String]
        #expect(headers?["Authorization"] == "Bearer abc")

        agent.config.clearInterceptors()
        agent.config.addInterceptor(TokenFromFile(token: "abc\r\nX-Injected: yes"))
        let task = await agent.finishedTask(Echo(headers: [:]))
        guard case .serialization(let reason)? = task.error else {
            Issue.record("expected a serialization error, got \(String(describing: task.error))")
            return
        }
        #expect(reason.contains("Authorization"))
        #expect(fixture.server.receivedRequests(path: "/headers").count == 1)
    }
}
