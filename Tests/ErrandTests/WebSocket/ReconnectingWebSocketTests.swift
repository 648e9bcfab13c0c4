import Foundation
import Testing

@testable import Errand

/// ``ReconnectingWebSocket`` against a stub whose handshakes the test scripts one by one.
@Suite("WebSocket: reconnecting")
struct ReconnectingWebSocketTests {
    struct Quotes: BaseRequest {
        var url: String { "/quotes" }
    }

    /// The n-th handshake (from 0) is answered by `answers[n]`, the last one for any after.
    static func agent(_ answers: [StubTransport.WebSocketAnswer]) -> NetworkAgent {
        let count = Locked(0)
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        return NetworkAgent(
            config: config,
            transport: StubTransport(webSocket: { _ in
                let index = count.withLock { count in
                    defer { count += 1 }
                    return count
                }
                return answers[min(index, answers.count - 1)]
            }),
            // Keep-alive waits never fire: a slow run (the thread sanitizer) must not time a socket out.
            retryTimer: ManualRetryTimer().retryTimer)
    }

    /// A back-off that records its waits and returns at once.
    static func backoff(_ waits: Locked<[TimeInterval]>) -> ReconnectBackoff {
        ReconnectBackoff { seconds in waits.withLock { $0.append(seconds) } }
    }

    enum Seen: Equatable {
        case connected, message(WebSocketMessage), disconnected(ErrandError)
    }

    /// Every event until the end, and the error it ended with.
    static func run(_ socket: ReconnectingWebSocket, onConnect: (WebSocket) async throws -> Void = { _ in })
        async -> ([Seen], ErrandError?)
    {
        var seen: [Seen] = []
        do {
            for try await event in socket {
                switch event {
                case .connected(let socket):
                    seen.append(.connected)
                    try? await onConnect(socket)
                case .message(let message): seen.append(.message(message))
                case .disconnected(let error): seen.append(.disconnected(error))
                }
            }
            return (seen, nil)
        } catch {
            return (seen, error)
        }
    }

    static let lost = ErrandError.transport(URLError(.networkConnectionLost))

    @Test func aDropReconnectsAndANormalCloseEndsTheSequence() async {
        let waits = Locked<[TimeInterval]>([])
        let agent = Self.agent([
            .accept { peer in
                peer.send(.text("a"))
                peer.drop()
            },
            .accept { peer in
                peer.send(.text("b"))
                peer.close(.normalClosure)
            },
        ])
        let (seen, error) = await Self.run(ReconnectingWebSocket(Quotes(), agent: agent, backoff: Self.backoff(waits)))
        #expect(error == nil)
        #expect(
            seen == [.connected, .message(.text("a")), .disconnected(Self.lost), .connected, .message(.text("b"))])
        #expect(waits.withLock { $0 } == [1])
    }

    @Test func eachNewSocketIsHandedOverSoTheAppSubscribesAgain() async {
        let subscriptions = Locked<[WebSocketMessage]>([])
        let script: @Sendable (StubWebSocketPeer) async -> Void = { peer in
            for await message in peer.messages {
                subscriptions.withLock { $0.append(message) }
                peer.close(.goingAway, reason: "restarting")
            }
        }
        let agent = Self.agent([.accept(script: script), .accept(script: script), .accept { $0.close() }])
        let (seen, error) = await Self.run(
            ReconnectingWebSocket(Quotes(), agent: agent, backoff: Self.backoff(Locked([])))
        ) { socket in
            try await socket.send("subscribe AAPL")
        }
        #expect(error == nil)
        #expect(subscriptions.withLock { $0 } == [.text("subscribe AAPL"), .text("subscribe AAPL")])
        let restarting = ErrandError.webSocketClosed(code: .goingAway, reason: "restarting")
        #expect(seen == [.connected, .disconnected(restarting), .connected, .disconnected(restarting), .connected])
    }

    @Test func failedHandshakesWaitLongerEachTimeAndAnApplicationCloseCodeEndsByThrowing() async {
        let waits = Locked<[TimeInterval]>([])
        let agent = Self.agent([
            .reject(Response(statusCode: 503)), .reject(Response(statusCode: 429)),
            .accept { peer in
                peer.send(.text("hi"))
                peer.close(WebSocketCloseCode(rawValue: 4003), reason: "banned")
            },
        ])
        let (seen, error) = await Self.run(ReconnectingWebSocket(Quotes(), agent: agent, backoff: Self.backoff(waits)))
        #expect(error == .webSocketClosed(code: WebSocketCloseCode(rawValue: 4003), reason: "banned"))
        #expect(
            seen == [
                .disconnected(.statusCode(503)), .disconnected(.statusCode(429)), .connected, .message(.text("hi")),
            ], "no .disconnected before the final throw")
        #expect(waits.withLock { $0 } == [1, 2])
    }

    @Test func aHandshakeRejectedForGoodEndsAtOnce() async {
        let agent = Self.agent([.reject(Response(statusCode: 401))])
        let (seen, error) = await Self.run(
            ReconnectingWebSocket(Quotes(), agent: agent, backoff: Self.backoff(Locked([]))))
        #expect(seen.isEmpty && error == .statusCode(401))
    }

    @Test func cancellingTheConsumerEndsItNormallyAndClosesWith1001() async throws {
        let peers = Locked<[StubWebSocketPeer]>([])
        let (closed, closing) = AsyncStream.makeStream(of: Void.self)
        let agent = Self.agent([
            .accept { peer in
                peers.withLock { $0.append(peer) }
                peer.send(.text("first"))
                // Until the client's close frame arrives.
                for await _ in peer.messages {}
                closing.yield()
            }
        ])
        let source = ReconnectingWebSocket(Quotes(), agent: agent, backoff: Self.backoff(Locked([])))
        let consumer = Task { () -> (Int, ErrandError?) in
            var count = 0
            do {
                for try await event in source {
                    count += 1
                    if case .message = event { withUnsafeCurrentTask { $0?.cancel() } }
                }
                return (count, nil)
            } catch {
                return (count, error as? ErrandError)
            }
        }
        let (count, error) = await consumer.value
        #expect(count == 2 && error == nil)
        for await _ in closed { break }
        #expect(peers.withLock { $0.first?.clientCloseCode } == .goingAway)
    }
}
