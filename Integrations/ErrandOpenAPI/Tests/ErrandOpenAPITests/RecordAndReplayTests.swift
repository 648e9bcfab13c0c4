import Errand
import ErrandOpenAPI
import ErrandTestServer
import Foundation
import OpenAPIRuntime
import Testing

/// A generated client's calls recorded to an HTTP Archive against the server, then answered from
/// the file with the server gone.
@Suite("Record and replay")
struct RecordAndReplayTests {
    /// The calls, and what each gave, as text to compare.
    static func session(_ client: Client) async throws -> [String] {
        let echo = try await client.echo(query: .init(q: "replayed")).ok.body.json
        let chat = try await client.createChatCompletion(
            body: .json(.init(model: "errand-1", messages: [.init(role: "user", content: "Hi")])))
        let stream = try await client.createChatCompletion(
            headers: .init(accept: [.init(contentType: .textEventStream)]),
            body: .json(.init(model: "errand-1", messages: [.init(role: "user", content: "Hi")], stream: true)))
        var streamed = ""
        for try await event in try stream.ok.body.textEventStream.asDecodedServerSentEventsWithJSONData(
            of: Components.Schemas.ChatChunk.self, while: { $0 != ArraySlice("[DONE]".utf8) })
        {
            streamed += event.data?.choices.first?.delta.content ?? ""
        }
        let missing = try await client.status(path: .init(code: 404))
        return [
            echo.args.additionalProperties["q"]?.value as? String ?? "-",
            try chat.ok.body.json.choices.first?.message.content ?? "-",
            streamed,
            "\(missing)",
        ]
    }

    @Test func aRecordedSessionReplaysOffline() async throws {
        let har = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: har) }
        let recorder = HARRecorder()
        let recording = try Harness { $0.addEventMonitor(recorder) }
        let recorded = try await Self.session(recording.client)
        try recorder.write(to: har)
        let serverURL = try #require(URL(string: recording.server.baseURL))
        recording.server.stop()

        let replaying = NetworkAgent(config: NetworkConfig(), transport: try ReplayTransport(har: har))
        let client = Client(serverURL: serverURL, transport: ErrandClientTransport(agent: replaying))
        let replayed = try await Self.session(client)

        #expect(recorded[0] == "replayed")
        #expect(recorded[1] == "You said: Hi. This reply streams one token at a time.")
        #expect(recorded[2] == recorded[1])
        #expect(replayed == recorded)
    }
}
