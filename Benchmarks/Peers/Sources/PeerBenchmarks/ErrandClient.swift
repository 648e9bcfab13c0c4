import Errand
import Foundation

/// Errand's `WebSocket` on `CurlTransport`, keep-alive off.
struct ErrandClient: SocketClient {
    let name = "Errand"
    private let agent = NetworkAgent(config: NetworkConfig(), transport: CurlTransport())

    private struct Socket: BaseRequest {
        let url: String
    }

    private func options(compressed: Bool = false) -> WebSocketOptions {
        var options = WebSocketOptions()
        options.pingInterval = nil
        options.compression = compressed
        return options
    }

    func roundTrips(url: String, count: Int) async throws -> [Duration] {
        let socket = try await agent.webSocket(Socket(url: url), options: options())
        var messages = socket.makeAsyncIterator()
        let text = String(repeating: "x", count: 64)
        let clock = ContinuousClock()
        var samples: [Duration] = []
        samples.reserveCapacity(count)
        for _ in 0..<count {
            let sent = clock.now
            try await socket.send(text)
            guard case .text = try await messages.next() else { throw PeerError("Errand: no echo") }
            samples.append(clock.now - sent)
        }
        await socket.close()
        return samples
    }

    func receive(url: String, count: Int, compressed: Bool) async throws {
        let socket = try await agent.webSocket(Socket(url: url), options: options(compressed: compressed))
        guard socket.isCompressed == compressed else { throw PeerError("Errand: compression not as asked") }
        var messages = socket.makeAsyncIterator()
        for _ in 0..<count {
            guard case .binary(let data) = try await messages.next(), data.count == 1024 else {
                throw PeerError("Errand: a message was lost")
            }
        }
        await socket.close()
    }

    func fanIn(url: String, sockets: Int, messages: Int, allOpen: @escaping @Sendable () -> Void) async throws {
        var open: [WebSocket] = []
        for _ in 0..<sockets { open.append(try await agent.webSocket(Socket(url: url), options: options())) }
        allOpen()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for socket in open {
                group.addTask {
                    var iterator = socket.makeAsyncIterator()
                    for _ in 0..<messages {
                        guard try await iterator.next() != nil else { throw PeerError("Errand: a socket ended early") }
                    }
                    await socket.close()
                }
            }
            try await group.waitForAll()
        }
    }

    /// Opens `count` idle sockets and keeps them.
    func openIdle(url: String, count: Int) async throws -> [WebSocket] {
        var sockets: [WebSocket] = []
        for _ in 0..<count {
            sockets.append(try await agent.webSocket(Socket(url: url), options: options(compressed: true)))
        }
        return sockets
    }
}
