import Dispatch
import Foundation

/// A ``Transport`` that answers from a closure instead of the network, for tests.
///
/// ```swift
/// let agent = NetworkAgent(transport: StubTransport { request in
///     Response(statusCode: 200, headers: ["Content-Type": "application/json"], data: Data(#"{"nick":"ann"}"#.utf8))
/// })
/// ```
///
/// Throw an ``ErrandError`` from the closure to simulate a transport failure such as
/// `.timedOut` or `.transport(URLError(.notConnectedToInternet))`.
public struct StubTransport: Transport {
    /// Produces the response for a request.
    public typealias Responder = @Sendable (TransportRequest) throws(ErrandError) -> Response

    private let latency: TimeInterval
    private let respond: Responder

    /// Creates a stub that answers every request with `respond` after `latency` seconds (default
    /// `0`: at once, before `send` returns).
    public init(latency: TimeInterval = 0, respond: @escaping Responder) {
        self.latency = latency
        self.respond = respond
    }

    /// Starts `request`; see ``Transport/send(_:events:)``.
    public func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportTask
    {
        let task = StubTask(events: events)
        let answer: @Sendable () -> Void = { [respond] in
            task.deliver(Result { () throws(ErrandError) in try respond(request) })
        }
        // Without latency the answer comes at once, on the caller's thread, as from a transport
        // that costs nothing: what is measured with it is Errand's own work.
        if latency > 0 {
            DispatchQueue.global().asyncAfter(deadline: .now() + latency, execute: answer)
        } else {
            answer()
        }
        return task
    }

    /// Delivers the stub's outcome unless cancelled first; either way completes once.
    private final class StubTask: TransportTask {
        private let events: Locked<(@Sendable (TransportEvent) -> Void)?>

        init(events: @escaping @Sendable (TransportEvent) -> Void) {
            self.events = Locked(events)
        }

        func cancel() {
            take()?(.completed(.cancelled))
        }

        func deliver(_ outcome: Result<Response, ErrandError>) {
            guard let events = take() else { return }
            TransportEvent.answer(outcome, to: events)
        }

        private func take() -> (@Sendable (TransportEvent) -> Void)? {
            events.withLock { events in
                defer { events = nil }
                return events
            }
        }
    }
}
