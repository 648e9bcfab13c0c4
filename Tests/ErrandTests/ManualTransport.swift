import Errand
import Foundation
import Testing

/// A transport the test drives by hand: it records what was sent and completes when told.
final class ManualTransport: Transport, @unchecked Sendable {  // Sendable because `condition` guards `sent`.
    final class Sent: @unchecked Sendable {  // Sendable because `lock` guards `_cancelled` and `_ended`.
        let request: TransportRequest
        let events: @Sendable (TransportEvent) -> Void
        /// Recursive: a completion it delivers may cancel the task on the same thread.
        private let lock = NSRecursiveLock()
        private var _cancelled = false
        /// Whether a completion was delivered by ``cancel()`` or ``respondOnce(body:)``.
        private var _ended = false

        init(request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) {
            self.request = request
            self.events = events
        }

        var cancelled: Bool {
            lock.lock()
            defer { lock.unlock() }
            return _cancelled
        }

        /// Marks the request cancelled and completes it with `.cancelled`, unless it had ended.
        func cancel() {
            lock.lock()
            defer { lock.unlock() }
            guard !_cancelled else { return }
            _cancelled = true
            guard !_ended else { return }
            _ended = true
            events(.completed(.cancelled))
        }

        /// Delivers a whole response, as a real transport would.
        func respond(status: Int = 200, headers: [String: String] = [:], body: String = "{}") {
            events(.responseHead(statusCode: status, headers: headers))
            events(.body(Data(body.utf8)))
            events(.completed(nil))
        }

        /// Delivers a whole response unless ``cancel()`` ended the request first, and keeps a cancel
        /// from another thread out until it is delivered: one completion, as a real transport gives.
        func respondOnce(body: String) {
            lock.lock()
            defer { lock.unlock() }
            let response: [TransportEvent] = [.responseHead(statusCode: 200, headers: [:]), .body(Data(body.utf8))]
            for event in response + [.completed(nil)] {
                guard !_ended else { return }
                if case .completed = event { _ended = true }
                events(event)
            }
        }
    }

    private struct Handle: TransportTask {
        let sent: Sent
        func cancel() { sent.cancel() }
    }

    private let condition = NSCondition()
    private var _sent: [Sent] = []

    var sent: [Sent] {
        condition.lock()
        defer { condition.unlock() }
        return _sent
    }

    /// The requests sent, once there are `count`; `nil` after `seconds` (widened under a
    /// sanitizer), so that a request that is never sent fails the test instead of hanging it.
    /// It suspends between looks, never holding a thread of the concurrency pool.
    func sent(count: Int, within seconds: TimeInterval = 10) async -> [Sent]? {
        guard (try? await eventually(within: seconds, { self.sent.count >= count })) != nil else { return nil }
        return sent
    }

    /// Blocks until `count` requests were sent, for a test acting on a callback queue, which is
    /// not the concurrency pool's; `nil` after `timeout` seconds, as ``sent(count:within:)``.
    func waitForSent(count: Int, timeout: TimeInterval = 10) -> [Sent]? {
        let deadline = Date() + timeout
        condition.lock()
        defer { condition.unlock() }
        while _sent.count < count {
            guard condition.wait(until: deadline) else { return nil }
        }
        return _sent
    }

    var sentPaths: [String] { sent.map(\.request.url.path) }

    func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportTask {
        let sent = Sent(request: request, events: events)
        condition.lock()
        _sent.append(sent)
        condition.broadcast()
        condition.unlock()
        return Handle(sent: sent)
    }
}

extension NetworkAgent {
    /// An agent on `transport` with its own configuration, for tests.
    static func testing(
        _ transport: any Transport, baseUrl: String = "http://example.invalid",
        callbackQueue: DispatchQueue = DispatchQueue(label: "errand.tests.callbacks")
    ) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = baseUrl
        config.callbackQueue = callbackQueue
        return NetworkAgent(config: config, transport: transport)
    }
}
