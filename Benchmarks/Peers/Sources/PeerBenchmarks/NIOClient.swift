import Foundation
import Logging
import NIOCore
import WSClient
import WSCompression

/// hummingbird's `WebSocketClient` (swift-websocket) on NIO's shared event loops, UTF-8
/// validation on as RFC 6455 asks (Errand always validates), automatic pings off.
struct NIOClient: SocketClient {
    let name = "swift-websocket (NIO)"
    private let logger = Logger(label: "PeerBenchmarks") { _ in SwiftLogNoOpLogHandler() }

    private func configuration(compressed: Bool = false) -> WebSocketClientConfiguration {
        WebSocketClientConfiguration(
            maxFrameSize: 1 << 20, extensions: compressed ? [.perMessageDeflate()] : [], autoPing: .disabled,
            validateUTF8: true)
    }

    func roundTrips(url: String, count: Int) async throws -> [Duration] {
        let samples = Samples()
        try await WebSocketClient.connect(url: url, configuration: configuration(), logger: logger) {
            inbound, outbound, _ in
            var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            let text = String(repeating: "x", count: 64)
            let clock = ContinuousClock()
            for _ in 0..<count {
                let sent = clock.now
                try await outbound.write(.text(text))
                guard case .text = try await messages.next() else { throw PeerError("NIO: no echo") }
                samples.append(clock.now - sent)
            }
            try await outbound.close(.normalClosure, reason: nil)
        }
        return samples.all
    }

    func receive(url: String, count: Int, compressed: Bool) async throws {
        try await WebSocketClient.connect(
            url: url, configuration: configuration(compressed: compressed), logger: logger
        ) { inbound, outbound, _ in
            var messages = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
            for _ in 0..<count {
                guard case .binary(let buffer) = try await messages.next(), buffer.readableBytes == 1024 else {
                    throw PeerError("NIO: a message was lost")
                }
            }
            try await outbound.close(.normalClosure, reason: nil)
        }
    }

    func fanIn(url: String, sockets: Int, messages: Int, allOpen: @escaping @Sendable () -> Void) async throws {
        let opened = Counter(target: sockets, reached: allOpen)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<sockets {
                group.addTask {
                    try await WebSocketClient.connect(url: url, configuration: configuration(), logger: logger) {
                        inbound, outbound, _ in
                        opened.increment()
                        var iterator = inbound.messages(maxSize: 1 << 20).makeAsyncIterator()
                        for _ in 0..<messages {
                            guard try await iterator.next() != nil else { throw PeerError("NIO: a socket ended early") }
                        }
                        try await outbound.close(.normalClosure, reason: nil)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Opens `count` sockets that stay open, idle, until the process exits.
    func openIdle(url: String, count: Int, opened: @escaping @Sendable () -> Void) {
        for _ in 0..<count {
            Task {
                try await WebSocketClient.connect(
                    url: url, configuration: configuration(compressed: true), logger: logger
                ) { inbound, _, _ in
                    opened()
                    for try await _ in inbound {}
                }
            }
        }
    }
}

/// Latencies appended from a client's handler.
final class Samples: @unchecked Sendable {  // Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var samples: [Duration] = []

    func append(_ sample: Duration) { lock.withLock { samples.append(sample) } }
    var all: [Duration] { lock.withLock { samples } }
}

/// Calls `reached` once `increment()` was called `target` times.
final class Counter: @unchecked Sendable {  // Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var count = 0
    private let target: Int
    private let reached: @Sendable () -> Void

    init(target: Int, reached: @escaping @Sendable () -> Void) {
        self.target = target
        self.reached = reached
    }

    func increment() {
        let isLast = lock.withLock {
            count += 1
            return count == target
        }
        if isLast { reached() }
    }
}
