import Foundation

/// A WebSocket that stays connected: it opens the socket again after the connection drops, a
/// keep-alive ping goes unanswered, or the server closes for a reason that passes.
///
/// ```swift
/// for try await event in ReconnectingWebSocket(QuotesApi()) {
///     switch event {
///     case .connected(let socket): try await socket.send(#"{"subscribe":"AAPL"}"#)
///     case .message(let message): show(try message.decode(Quote.self))
///     case .disconnected(let error): showOffline(error)
///     }
/// }
/// ```
///
/// Each connection is the request's handshake through the agent, as
/// ``NetworkAgent/webSocket(_:options:)`` sends it. `.connected` hands over each new socket, so
/// the app re-subscribes by sending on it; `.disconnected` comes before each wait to reconnect,
/// also after a reconnect that failed, never before the sequence ends.
///
/// It reconnects after a drop (``ErrandError/transport(_:)``), a ping timeout
/// (``ErrandError/timedOut``), a close with 1001, 1006, 1011, 1012 or 1013, and a handshake
/// answered 408, 429 or 5xx, waiting per the back-off: the waits grow while connections fail
/// and start over once a connection delivered a message. It ends normally — returns `nil` — when
/// the server closes with 1000 or no code, when the app closes a socket it was handed, and when
/// the consuming task is cancelled (which closes the socket with 1001). It ends by throwing on
/// any other close code (``ErrandError/webSocketClosed(code:reason:)``: 1008 or an application's
/// 4000–4999 means "do not come back"), on a handshake rejected with another status, and on any
/// other error.
public struct ReconnectingWebSocket: AsyncSequence, Sendable {
    /// What happens to the connection, and what it receives.
    public enum Event: Sendable {
        /// A socket opened: send on it what a new connection needs, such as subscriptions.
        case connected(WebSocket)
        /// A message from the current socket.
        case message(WebSocketMessage)
        /// The socket ended or could not be opened with this error; a reconnect follows the wait.
        case disconnected(ErrandError)
    }

    /// One event.
    public typealias Element = Event
    /// What iteration throws.
    public typealias Failure = ErrandError

    /// The handshake each connection sends.
    public let request: any BaseRequest
    /// The agent the connections run through.
    public let agent: NetworkAgent
    /// How each socket is opened and kept.
    public let options: WebSocketOptions
    /// How long to wait before reconnecting.
    public let backoff: ReconnectBackoff

    /// Sockets to `request`'s URL through `agent` (default ``NetworkAgent/shared``) with
    /// `options` (default ``WebSocketOptions/init()``), reconnecting per `backoff` (default 1 s
    /// doubling up to 60 s).
    public init(
        _ request: some BaseRequest, agent: NetworkAgent = .shared, options: WebSocketOptions = WebSocketOptions(),
        backoff: ReconnectBackoff = ReconnectBackoff()
    ) {
        self.request = request
        self.agent = agent
        self.options = options
        self.backoff = backoff
    }

    /// An iterator that runs its own connections.
    public func makeAsyncIterator() -> Iterator {
        Iterator(source: self)
    }

    /// Runs one socket at a time and reconnects; not meant to be shared between tasks.
    public struct Iterator: AsyncIteratorProtocol {
        /// One event.
        public typealias Element = Event
        /// What iteration throws.
        public typealias Failure = ErrandError

        private let source: ReconnectingWebSocket
        private var socket: WebSocket?
        private var messages: WebSocket.Iterator?
        /// Connections that failed in a row since one delivered a message.
        private var failures = 0
        private var isFinished = false

        init(source: ReconnectingWebSocket) {
            self.source = source
        }

        /// The next event; `nil` once the server closed normally, the app closed the socket, or
        /// the consuming task was cancelled.
        public mutating func next() async throws(ErrandError) -> Event? {
            guard !isFinished else { return nil }
            guard !Task.isCancelled else { return finish() }
            if var current = messages {
                return try await receive(from: &current)
            }
            if failures > 0 {
                do {
                    try await source.backoff.sleep(source.backoff.delay(afterFailures: failures))
                } catch {
                    return finish()
                }
                guard !Task.isCancelled else { return finish() }
            }
            return try await connect()
        }

        private mutating func receive(from current: inout WebSocket.Iterator) async throws(ErrandError) -> Event? {
            do throws(ErrandError) {
                guard let message = try await current.next() else { return finish() }
                messages = current
                failures = 0
                return .message(message)
            } catch {
                (socket, messages) = (nil, nil)
                guard !Task.isCancelled else { return finish() }
                return try disconnected(error, reconnects: Self.reconnects(after: error))
            }
        }

        private mutating func connect() async throws(ErrandError) -> Event? {
            do throws(ErrandError) {
                let opened = try await source.agent.webSocket(source.request, options: source.options)
                socket = opened
                messages = opened.makeAsyncIterator()
                return .connected(opened)
            } catch {
                guard error != .cancelled, !Task.isCancelled else { return finish() }
                return try disconnected(error, reconnects: Self.reconnects(afterHandshake: error))
            }
        }

        /// `.disconnected` before a wait, or the final throw.
        private mutating func disconnected(_ error: ErrandError, reconnects: Bool) throws(ErrandError) -> Event {
            guard reconnects else {
                isFinished = true
                throw error
            }
            failures += 1
            return .disconnected(error)
        }

        private mutating func finish() -> Event? {
            isFinished = true
            if let socket {
                Task { try? await socket.close(.goingAway, reason: "") }
            }
            (socket, messages) = (nil, nil)
            return nil
        }

        /// Close codes after which the same socket may well open again: the server went away or
        /// restarts (1001, 1012), failed (1011), is overloaded (1013), or the connection broke (1006).
        private static let reconnectingCodes: Set<WebSocketCloseCode> = [
            .goingAway, .abnormalClosure, .internalServerError, WebSocketCloseCode(rawValue: 1012),
            WebSocketCloseCode(rawValue: 1013),
        ]

        /// Whether an open socket's end is worth a reconnect.
        private static func reconnects(after error: ErrandError) -> Bool {
            switch error {
            case .transport, .timedOut: true
            case .webSocketClosed(let code, _): reconnectingCodes.contains(code)
            default: false
            }
        }

        /// Whether a failed handshake is worth another: the network, or a status that says "later".
        private static func reconnects(afterHandshake error: ErrandError) -> Bool {
            switch error {
            case .transport, .timedOut: true
            case .statusCode(let status): status == 408 || status == 429 || (500...599).contains(status)
            default: false
            }
        }
    }
}
