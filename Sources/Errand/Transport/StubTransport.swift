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
///
/// A stub made with a `webSocket` responder also opens WebSockets, whose server side is a
/// script driving a ``StubWebSocketPeer``.
public struct StubTransport: Transport {
    /// Produces the response for a request.
    public typealias Responder = @Sendable (TransportRequest) throws(ErrandError) -> Response
    /// Answers a WebSocket's handshake; throw to fail it as the network would.
    public typealias WebSocketResponder = @Sendable (TransportRequest) throws(ErrandError) -> WebSocketAnswer

    /// How a stub answers a WebSocket's handshake.
    public enum WebSocketAnswer: Sendable {
        /// Opens the socket — choosing `subprotocol` (default none) among those the client
        /// offered — and runs `script` as the server's side.
        case accept(subprotocol: String? = nil, script: @Sendable (StubWebSocketPeer) async -> Void)
        /// Refuses it with `response`, such as a `401`.
        case reject(Response)
    }

    private let latency: TimeInterval
    private let respond: Responder
    private let webSocket: WebSocketResponder?

    /// Creates a stub that answers every request with `respond` after `latency` seconds (default
    /// `0`: at once, before `send` returns).
    public init(latency: TimeInterval = 0, respond: @escaping Responder) {
        self.latency = latency
        self.respond = respond
        webSocket = nil
    }

    /// Creates a stub that answers WebSocket handshakes with `webSocket` and other requests with
    /// `respond` (default: `404` with no body) after `latency` seconds (default `0`).
    public init(
        latency: TimeInterval = 0, respond: @escaping Responder = { _ in Response(statusCode: 404) },
        webSocket: @escaping WebSocketResponder
    ) {
        self.latency = latency
        self.respond = respond
        self.webSocket = webSocket
    }

    /// Starts `request`; see ``Transport/send(_:events:)``.
    public func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportTask
    {
        if request.upgradesToWebSocket { return openSocket(request, events: events) }
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

    /// Answers a WebSocket's handshake with the `webSocket` responder; without one it fails,
    /// naming what to do.
    private func openSocket(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportTask
    {
        let peer = StubWebSocketPeer(request: request, events: events)
        let connection = StubSocketConnection(peer: peer)
        let answer = Result { () throws(ErrandError) -> WebSocketAnswer in
            guard let webSocket else {
                throw WebSocketHandshake.unsupported(
                    by: "a StubTransport made without init(latency:respond:webSocket:)")
            }
            return try webSocket(request)
        }
        switch answer {
        case .failure(let error):
            peer.end(error)
        case .success(.reject(let response)):
            let task = StubTask(events: events)
            task.deliver(.success(response))
            return task
        case .success(.accept(let subprotocol, let script)):
            var headers = ["Upgrade": "websocket", "Connection": "Upgrade"]
            headers["Sec-WebSocket-Accept"] = WebSocketHandshake.acceptValue(
                for: request.headers.headerField("Sec-WebSocket-Key") ?? "")
            headers["Sec-WebSocket-Protocol"] = subprotocol
            peer.accept(headers)
            Task {
                await script(peer)
                peer.scriptReturned()
            }
        }
        return connection
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
