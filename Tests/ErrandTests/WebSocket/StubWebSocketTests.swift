import Foundation
import Testing

@testable import Errand

/// Socket code unit-tested against ``StubTransport``'s scripted peer: no server, no network.
@Suite("WebSocket: StubTransport's scripted peer")
struct StubWebSocketTests {
    struct Feed: BaseRequest {
        var url: String { "/feed" }
    }

    static func agent(_ webSocket: @escaping StubTransport.WebSocketResponder) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        // Keep-alive waits never fire: a slow run (the thread sanitizer) must not time a socket out.
        return NetworkAgent(
            config: config, transport: StubTransport(webSocket: webSocket), retryTimer: ManualRetryTimer().retryTimer)
    }

    @Test func theScriptEchoesAndSeesTheClientsClose() async throws {
        let peers = Locked<[StubWebSocketPeer]>([])
        let agent = Self.agent { _ in
            .accept { peer in
                peers.withLock { $0.append(peer) }
                for await message in peer.messages { peer.send(message) }
            }
        }
        let socket = try await agent.webSocket(Feed())
        #expect(socket.response.statusCode == 101)
        #expect(!socket.isCompressed)
        try await socket.send("hello")
        try await socket.send(Data([0, 1, 2]))
        var messages = socket.makeAsyncIterator()
        #expect(try await messages.next() == .text("hello"))
        #expect(try await messages.next() == .binary(Data([0, 1, 2])))
        #expect(try await socket.ping(Data("p".utf8)) >= 0, "the peer answers pings")
        try await socket.close(.normalClosure)
        #expect(try await messages.next() == nil)
        let peer = try #require(peers.withLock { $0.first })
        #expect(peer.clientCloseCode == .normalClosure)
        #expect(peer.request.url.absoluteString == "wss://api.example.com/feed")
    }

    @Test func thePeersCloseCodeAndDropReachTheConsumer() async throws {
        let closing = Self.agent { _ in
            .accept { peer in peer.close(WebSocketCloseCode(rawValue: 4001), reason: "bye") }
        }
        let closed = try await closing.webSocket(Feed())
        let (_, closeError) = await WebSocketTests.drain(closed)
        #expect(closeError == .webSocketClosed(code: WebSocketCloseCode(rawValue: 4001), reason: "bye"))

        let dropping = Self.agent { _ in .accept { peer in peer.drop() } }
        let dropped = try await dropping.webSocket(Feed())
        let (_, dropError) = await WebSocketTests.drain(dropped)
        guard let dropError, case .transport = dropError else {
            Issue.record("a drop ends with a transport error, not \(String(describing: dropError))")
            return
        }
        let sendAfterwards = await Result { () async throws(ErrandError) in try await dropped.send("late") }
        #expect(throws: dropError) { try sendAfterwards.get() }
    }

    /// Autobahn 7.9.1: the client answered a close frame with code 0 by 1001 now and then — the
    /// reader let go of its stream first, and that cancellation's close won the race.
    @Test func aCloseWithAnInvalidCodeIsAnsweredWith1002EveryTime() async throws {
        for _ in 0..<20 {
            let peers = Locked<[StubWebSocketPeer]>([])
            let agent = Self.agent { _ in
                .accept { peer in
                    peers.withLock { $0.append(peer) }
                    peer.close(WebSocketCloseCode(rawValue: 0))
                    for await _ in peer.messages {}
                }
            }
            let socket = try await agent.webSocket(Feed())
            let (_, error) = await WebSocketTests.drain(socket)
            guard case .webSocketClosed(.protocolError, _) = error else {
                Issue.record("ended with \(String(describing: error))")
                return
            }
            // The close frame reaches the peer before the connection ends, and with it the task.
            _ = await Result { () async throws(ErrandError) in try await socket.task.value }
            #expect(peers.withLock { $0.first?.clientCloseCode } == .protocolError)
        }
    }

    @Test func aScriptThatReturnsClosesNormallyAfterWhatItSent() async throws {
        let agent = Self.agent { _ in .accept { peer in peer.send(.text("welcome")) } }
        let (messages, error) = await WebSocketTests.drain(try await agent.webSocket(Feed()))
        #expect(messages == [.text("welcome")] && error == nil)
    }

    @Test func aRejectedHandshakeThrowsItsStatusAndTheChosenSubprotocolIsReported() async throws {
        let agent = Self.agent { request in
            guard request.headers.headerField("Authorization") != nil else {
                return .reject(Response(statusCode: 401, data: Data("sign in".utf8)))
            }
            return .accept(subprotocol: "v2") { _ in }
        }
        await #expect(throws: ErrandError.statusCode(401)) { try await agent.webSocket(Feed()) }

        struct Signed: BaseRequest {
            var url: String { "/feed" }
            var headers: [String: String] { ["Authorization": "Bearer t"] }
        }
        var options = WebSocketOptions()
        options.subprotocols = ["v1", "v2"]
        let socket = try await agent.webSocket(Signed(), options: options)
        #expect(socket.subprotocol == "v2")
    }

    /// The snippet of the DocC article "WebSockets", section "Testing with the stub".
    @Test func theArticlesStubSnippetBehavesAsItSays() async throws {
        let agent = NetworkAgent(
            transport: StubTransport(webSocket: { request in
                guard request.headers["Authorization"] != nil else { return .reject(Response(statusCode: 401)) }
                return .accept { peer in
                    for await message in peer.messages {
                        peer.send(message)
                        peer.close(WebSocketCloseCode(rawValue: 4000), reason: "once is enough")
                    }
                }
            }))
        struct Signed: BaseRequest {
            var url: String { "wss://chat.example.com/general" }
            var headers: [String: String] { ["Authorization": "Bearer t"] }
        }
        var quiet = WebSocketOptions()
        // No keep-alive: a slow run (the thread sanitizer) must not time the socket out.
        quiet.pingInterval = nil
        let socket = try await agent.webSocket(Signed(), options: quiet)
        try await socket.send("hi")
        let (messages, error) = await WebSocketTests.drain(socket)
        #expect(messages == [.text("hi")])
        #expect(error == .webSocketClosed(code: WebSocketCloseCode(rawValue: 4000), reason: "once is enough"))
    }

    /// A transport of the app's that answers the upgrade with a `101` but hands over no connection.
    struct Answers101: Transport {
        struct Task: TransportTask {
            func cancel() {}
        }

        func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
            -> any TransportTask
        {
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.01) {
                events(.responseHead(statusCode: 101, headers: ["Upgrade": "websocket", "Connection": "Upgrade"]))
                events(.completed(nil))
            }
            return Task()
        }
    }

    @Test func aTransportThatAnswers101WithoutAConnectionFailsTheHandshakeNamingCurlTransport() async throws {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        let agent = NetworkAgent(config: config, transport: Answers101())
        do {
            _ = try await agent.webSocket(Feed())
            Issue.record("the handshake succeeded")
        } catch {
            #expect("\(error)".contains("CurlTransport"))
        }
    }

    /// Answers 101 and ends before `send` returns: the head and the end come before the pipeline
    /// attaches the transport task, as under heavy load a transport's thread may.
    struct Answers101AtOnce: Transport {
        func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
            -> any TransportTask
        {
            events(.responseHead(statusCode: 101, headers: ["Upgrade": "websocket", "Connection": "Upgrade"]))
            events(.completed(nil))
            return Answers101.Task()
        }
    }

    @Test func aHandshakeAnsweredAndEndedBeforeItsTaskIsAttachedStillEnds() async throws {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        let agent = NetworkAgent(config: config, transport: Answers101AtOnce())
        do {
            _ = try await agent.webSocket(Feed())
            Issue.record("the handshake succeeded")
        } catch {
            #expect("\(error)".contains("CurlTransport"))
        }
    }

    @Test func aStubWithoutAWebSocketResponderSaysHowToMakeOne() async throws {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        let agent = NetworkAgent(config: config, transport: StubTransport { _ in Response(statusCode: 200) })
        do {
            _ = try await agent.webSocket(Feed(), options: WebSocketOptions())
            Issue.record("the handshake succeeded")
        } catch {
            #expect("\(error)".contains("webSocket"))
        }
    }
}
