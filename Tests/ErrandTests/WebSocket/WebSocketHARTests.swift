import Foundation
import Testing

@testable import Errand

/// A socket's messages in its HAR entry, in Chrome's `_webSocketMessages`, redaction applied.
@Suite("WebSocket: HAR recording")
struct WebSocketHARTests {
    struct Chat: BaseRequest {
        var url: String { "/chat" }
        var headers: [String: String] { ["Authorization": "Bearer s3cr3t-token"] }
    }

    /// An agent whose stub echoes each message and then quotes the request's credential.
    static func agent(recorder: HARRecorder) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        config.addEventMonitor(recorder)
        return NetworkAgent(
            config: config,
            transport: StubTransport(webSocket: { request in
                .accept { peer in
                    for await message in peer.messages {
                        peer.send(message)
                        peer.send(.text("you sent " + (request.headers.headerField("Authorization") ?? "")))
                    }
                }
            }),
            // Keep-alive waits never fire: a slow run (the thread sanitizer) must not time a socket out.
            retryTimer: ManualRetryTimer().retryTimer)
    }

    /// The messages of the recording's only entry, and the entry.
    static func recorded(_ recorder: HARRecorder) throws -> ([[String: Any]], [String: Any]) {
        let har = try JSONSerialization.jsonObject(with: recorder.harData()) as? [String: Any]
        let log = try #require(har?["log"] as? [String: Any])
        let entries = try #require(log["entries"] as? [[String: Any]])
        try #require(entries.count == 1)
        return (entries[0]["_webSocketMessages"] as? [[String: Any]] ?? [], entries[0])
    }

    @Test func messagesBothWaysAreRecordedInOrderWithSecretsMasked() async throws {
        let recorder = HARRecorder(redaction: .default.adding(jsonFields: ["password"]))
        let socket = try await Self.agent(recorder: recorder).webSocket(Chat())
        let before = Date().timeIntervalSince1970
        try await socket.send(#"{"user":"ann","password":"hunter2"}"#)
        var messages = socket.makeAsyncIterator()
        _ = try await messages.next()
        _ = try await messages.next()
        try await socket.send(Data([0xFF, 0x00]))
        _ = try await messages.next()
        _ = try await messages.next()
        await socket.close()
        _ = try await socket.task.value

        let (recorded, entry) = try Self.recorded(recorder)
        #expect(recorded.map { $0["type"] as? String } == ["send", "receive", "receive", "send", "receive", "receive"])
        #expect(recorded.map { $0["opcode"] as? Int } == [1, 1, 1, 2, 2, 1])
        #expect((recorded[3]["data"] as? String) == Data([0xFF, 0x00]).base64EncodedString())
        let time = try #require(recorded[0]["time"] as? Double)
        #expect(time >= before - 1 && time <= Date().timeIntervalSince1970 + 1)
        let text = String(decoding: recorder.harData(), as: UTF8.self)
        #expect(!text.contains("hunter2"), "a masked JSON field is masked in messages too")
        #expect(!text.contains("s3cr3t-token"), "a masked header's value is masked where a message quotes it")
        #expect(((entry["request"] as? [String: Any])?["url"] as? String) == "wss://api.example.com/chat")
        #expect(((entry["response"] as? [String: Any])?["status"] as? Int) == 101)
    }

    @Test func messagesPastTheBodySizeAreCountedNotKept() async throws {
        let recorder = HARRecorder(maximumBodySize: 10)
        let socket = try await Self.agent(recorder: recorder).webSocket(Chat())
        try await socket.send("12345")
        try await socket.send("6789012")
        await socket.close()
        _ = try await socket.task.value

        let (recorded, entry) = try Self.recorded(recorder)
        #expect(recorded.compactMap { $0["data"] as? String }.first == "12345")
        let comment = try #require(entry["comment"] as? String)
        #expect(comment.contains("not recorded"))
    }
}
