// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation
import Testing

private func show<T>(_ value: T) {}
private func showOffline<T>(_ error: T) {}

/// The code the article "WebSockets" shows, compiled, and its stub's script run
/// (DocumentedCodeTests checks each snippet is the article's).
@Suite("Documentation: WebSockets")
struct WebSocketsSnippets {
    // snippet: WebSockets.md
    struct ChatApi: BaseRequest {
        let room: String
        var url: String { "/chat/\(room)" }
    }

    struct ChatLine: Codable { let user: String; let text: String }
    // end snippet

    struct QuotesApi: BaseRequest { var url: String { "/quotes" } }
    struct Quote: Decodable { let price: Double }

    static func chat() async throws {
        // snippet: WebSockets.md
        NetworkConfig.shared.baseUrl = "https://chat.example.com"
        let socket = try await ChatApi(room: "general").webSocket()
        try await socket.send(#"{"user":"ann","text":"hello"}"#)
        for try await message in socket {
            let line = try message.decode(ChatLine.self)
            print("\(line.user): \(line.text)")
        }
        // end snippet
    }

    static func options(agent: NetworkAgent) async throws {
        // snippet: WebSockets.md
        for try await message in try await ChatApi(room: "general").webSocket() {
            print(message)
        }
        // end snippet
        // snippet: WebSockets.md
        var options = WebSocketOptions()
        options.subprotocols = ["chat.v2"]        // offered in Sec-WebSocket-Protocol
        options.maximumMessageSize = 1 << 20      // 1 MiB; 16 MiB by default
        options.pingInterval = 15                 // seconds; nil for no keep-alive
        let socket = try await ChatApi(room: "general").webSocket(options: options)
        // end snippet
        // snippet: WebSockets.md
        try await socket.close(.goingAway, reason: "leaving the room")   // or `await socket.close()`, with 1000
        // end snippet
        // snippet: WebSockets.md
        let roundTrip = try await socket.ping()   // in seconds
        // end snippet
        // snippet: WebSockets.md
        for try await event in ReconnectingWebSocket(QuotesApi()) {
            switch event {
            case .connected(let socket): try await socket.send(#"{"subscribe":["AAPL","MSFT"]}"#)
            case .message(let message): show(try message.decode(Quote.self))
            case .disconnected(let error): showOffline(error)
            }
        }
        // end snippet
        // snippet: WebSockets.md
        let feed = ReconnectingWebSocket(
            QuotesApi(), agent: agent, options: options, backoff: ReconnectBackoff(initialDelay: 0.5, maximumDelay: 30))
        // end snippet
        _ = (roundTrip, feed)
    }

    struct EchoApi: BaseRequest {
        var url: String { "ws://stub.example/echo" }
        var headers: [String: String] { ["Authorization": "Bearer t0ken"] }
    }

    /// The article's stub: it echoes, closes on "bye" and drops on "crash".
    static func stubbed() -> NetworkAgent {
        // snippet: WebSockets.md
        let agent = NetworkAgent(transport: StubTransport(webSocket: { request in
            guard request.headers["Authorization"] != nil else { return .reject(Response(statusCode: 401)) }
            return .accept { peer in
                for await message in peer.messages {
                    switch message {
                    case .text("bye"): return peer.close(WebSocketCloseCode(rawValue: 4000), reason: "once is enough")
                    case .text("crash"): return peer.drop()   // gone without a close frame: iteration throws .transport
                    default: peer.send(message)               // an echo
                    }
                }
            }
        }))
        // end snippet
        return agent
    }

    @Test func theStubEchoesClosesAndDrops() async throws {
        let agent = Self.stubbed()
        let echoing = try await agent.webSocket(EchoApi())
        try await echoing.send("hello")
        var messages = echoing.makeAsyncIterator()
        #expect(try await messages.next() == .text("hello"))
        try await echoing.send("bye")
        await #expect(throws: ErrandError.webSocketClosed(code: WebSocketCloseCode(rawValue: 4000), reason: "once is enough")) {
            _ = try await messages.next()
        }

        let dropping = try await agent.webSocket(EchoApi())
        try await dropping.send("crash")
        var dropped = dropping.makeAsyncIterator()
        await #expect {
            _ = try await dropped.next()
        } throws: { error in
            if case .transport = error as? ErrandError { return true }
            return false
        }
    }
}
