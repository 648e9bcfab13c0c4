import Foundation

/// An open WebSocket: the messages the server sends, in order, as an `AsyncSequence`, and
/// `send` for the client's. Pings are answered, fragments joined and the closing handshake
/// done inside; a consumer that falls behind stops the reading, and `send` waits while the
/// connection cannot take more.
public final class WebSocket: AsyncSequence, Sendable {
    /// A message, whole.
    public typealias Element = WebSocketMessage
    /// What iteration throws.
    public typealias Failure = ErrandError

    /// The handshake's `101` head.
    public let response: Response
    /// The task that ran the handshake: its metrics, `tag` and `userInfo`; it finishes when the socket ends.
    public let task: RequestTask
    /// The subprotocol the server chose among those offered; `nil` for none.
    public let subprotocol: String?
    /// Whether messages are compressed (permessage-deflate) both ways.
    public let isCompressed: Bool
    private let session: WebSocketSession

    init(
        stream: ResponseStream, connection: any WebSocketConnection, agreement: WebSocketHandshake.Agreement,
        options: WebSocketOptions, timer: RetryTimer
    ) {
        response = stream.response
        task = stream.task
        subprotocol = agreement.subprotocol
        isCompressed = agreement.compression != nil
        let task = stream.task
        var report: WebSocketSession.MessageReport?
        if task.monitors.hasRecorders {
            report = { @Sendable message, isSent in
                task.monitors.request(task, webSocketMessage: message, isSent: isSent)
            }
        }
        let buffer = stream.buffer
        let session = WebSocketSession(
            connection: connection, options: options, compression: agreement.compression, timer: timer,
            report: report, flow: { buffer.pauseTransfer($0) })
        self.session = session
        task.stream?.closing = { session.cancel() }
        let reader = WebSocketReader(stream, into: session, compression: agreement.compression)
        // The stream was made for this socket and never handed out: nothing else claimed it.
        _ = buffer.divert(to: reader.receive)
    }

    /// A socket the app let go of is closed, as leaving a page closes a browser's.
    deinit {
        session.fail(code: .goingAway, reason: "", error: .cancelled)
    }

    /// The peer's close code once its close frame arrived, or the code the client closed with
    /// after a protocol violation or timeout; `nil` while open.
    public var closeCode: WebSocketCloseCode? { session.closeCode }
    /// The reason sent with ``closeCode``.
    public var closeReason: String? { session.closeReason }

    /// Sends `message`: returns once it is queued for the connection, or, while more than 1 MiB
    /// is queued, once enough of that went out — or the socket ended, whatever ended it (the
    /// keep-alive, a close, a cancel, the peer). A write that fails later fails the socket, and
    /// iteration throws why.
    /// - Throws: ``ErrandError/webSocketClosed(code:reason:)``, ``ErrandError/timedOut``,
    ///   ``ErrandError/cancelled`` or the transport's error once the socket is closing or closed.
    public func send(_ message: WebSocketMessage) async throws(ErrandError) {
        try await session.send(message)
    }

    /// Sends a text message.
    public func send(_ text: String) async throws(ErrandError) {
        try await session.send(.text(text))
    }

    /// Sends a binary message.
    public func send(_ data: Data) async throws(ErrandError) {
        try await session.send(.binary(data))
    }

    /// Sends a ping and returns the seconds until its pong. Only a pong with the same payload
    /// answers it; an empty `payload` (the default) is replaced by 8 bytes of the socket's own, so
    /// that a pong the server sends unasked answers no ping. The time to answer counts only while
    /// the consumer keeps up: while it holds the reading back, pongs wait with the messages.
    /// - Throws: ``ErrandError/serialization(_:)`` for a payload over 125 bytes, which RFC 6455
    ///   forbids, before anything is sent; ``ErrandError/timedOut`` when no pong came within
    ///   ``WebSocketOptions/pingTimeout``, which also closes the socket.
    public func ping(_ payload: Data = Data()) async throws(ErrandError) -> TimeInterval {
        try await session.ping(payload)
    }

    /// Closes the socket with 1000: returns once the server answered, or after
    /// ``WebSocketOptions/closeTimeout`` (the connection is then dropped); iteration then ends
    /// normally, after the messages received before. What arrives meanwhile is read even while
    /// the consumer holds the reading back, and dropped past `maximumMessageSize` bytes waiting.
    /// Does nothing once the socket ended.
    public func close() async {
        // 1000 may always be sent.
        try? await session.close(.normalClosure, reason: "")
    }

    /// Closes the socket with `code` and `reason` (cut at a character to fit a close frame's
    /// 123 bytes): returns once the server answered, or after ``WebSocketOptions/closeTimeout``
    /// (the connection is then dropped); iteration then ends normally.
    /// - Throws: ``ErrandError/serialization(_:)`` for a code RFC 6455 forbids in a close frame —
    ///   1005, 1006, 1015, and anything outside 1000–1003, 1007–1014 and 3000–4999 — before
    ///   anything is sent.
    public func close(_ code: WebSocketCloseCode, reason: String = "") async throws(ErrandError) {
        try await session.close(code, reason: reason)
    }

    /// Bytes of messages sent that the connection has not taken yet.
    var queuedBytes: Int { session.queuedBytes }
    /// Pings sent whose pong has not come.
    var pendingPingCount: Int { session.pendingPingCount }
    /// Where the socket is in its life.
    var phase: WebSocketSession.Phase { session.phase }

    /// Reads messages; see the type's description. The iterator keeps the socket open while it
    /// lives: `for try await message in try await ChatApi().webSocket()` reads to the end.
    public func makeAsyncIterator() -> Iterator {
        Iterator(socket: self)
    }

    /// Reads a socket's messages.
    public struct Iterator: AsyncIteratorProtocol {
        /// Held, not only its session: a socket no one holds is closed.
        private let socket: WebSocket
        private var hasClaimed = false

        init(socket: WebSocket) {
            self.socket = socket
        }

        private var session: WebSocketSession { socket.session }

        /// The next message; `nil` once the server closed normally or the calling task was
        /// cancelled, which closes the socket with 1001.
        /// - Throws: ``ErrandError/serialization(_:)`` when another iterator already read the socket.
        public mutating func next() async throws(ErrandError) -> WebSocketMessage? {
            if !hasClaimed {
                guard session.inbox.claim() else {
                    let address = socket.task.transportRequest.map { Redactor.url($0.url) } ?? "a server"
                    throw .serialization("the WebSocket to \(address) was already read: its messages are consumed once")
                }
                hasClaimed = true
            }
            let message = try await session.inbox.next()
            if message == nil, Task.isCancelled {
                let session = session
                Task { try? await session.close(.goingAway, reason: "") }
            }
            return message
        }
    }
}
