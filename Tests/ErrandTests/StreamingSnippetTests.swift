import Errand
import Foundation
import Testing

/// The code the article "Streaming and Server-Sent Events" shows, run against a stub.
@Suite("Documentation snippets: streaming")
struct StreamingSnippetTests {
    struct ChatCompletionsApi: BaseRequest {
        let prompt: String
        var url: String { "/v1/chat/completions" }
        var method: HTTPMethod { .post }
        var requestSerializerType: RequestSerializerType { .json }
        var arguments: [String: any Sendable]? {
            ["model": "gpt-4o-mini", "stream": true, "messages": [["role": "user", "content": prompt]]]
        }
        var requestAccessories: [any RequestAccessory] = []
    }

    struct ChatChunk: Decodable {
        struct Choice: Decodable {
            struct Delta: Decodable { let content: String? }
            let delta: Delta
        }
        let choices: [Choice]
    }

    final class KeepsRefusal: RequestAccessory, @unchecked Sendable {  // Sendable: `body` is guarded by `lock`.
        private let lock = NSLock()
        private var body: String?
        var explanation: String? { lock.withLock { body } }
        func requestWillStart(_ task: RequestTask) {}
        func requestWillStop(_ task: RequestTask) {}
        func requestDidStop(_ task: RequestTask) { lock.withLock { body = task.responseString } }
    }

    func agent(_ respond: @escaping StubTransport.Responder) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        return NetworkAgent(config: config, transport: StubTransport(respond: respond))
    }

    @Test func theChatLoopPrintsEachPiece() async throws {
        let agent = agent { request in
            #expect(request.url.absoluteString == "https://api.example.com/v1/chat/completions")
            let body =
                [#"{"choices":[{"delta":{"content":"Hel"}}]}"#, #"{"choices":[{"delta":{"content":"lo"}}]}"#]
                .map { "data: \($0)\n\n" }.joined() + "data: [DONE]\n\n"
            return Response(statusCode: 200, headers: ["Content-Type": "text/event-stream"], data: Data(body.utf8))
        }
        let stream = try await agent.stream(ChatCompletionsApi(prompt: "Hello"))
        var text = ""
        for try await event in stream.events {
            guard event.data != "[DONE]" else { break }
            text += try event.decode(ChatChunk.self).choices.first?.delta.content ?? ""
        }
        #expect(text == "Hello")
    }

    @Test func anAccessoryKeepsTheRefusalsExplanation() async throws {
        let agent = agent { _ in Response(statusCode: 401, data: Data("invalid API key".utf8)) }
        let refusal = KeepsRefusal()
        var request = ChatCompletionsApi(prompt: "Hello")
        request.requestAccessories = [refusal]
        await #expect(throws: ErrandError.statusCode(401)) { try await agent.stream(request) }
        #expect(refusal.explanation == "invalid API key")
    }
}
