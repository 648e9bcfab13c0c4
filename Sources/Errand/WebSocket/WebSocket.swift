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
        task.stream?.closing = { Task { await session.close(.goingAway, reason: "") } }
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
    /// is queued, once enough of that went out. A write that fails later fails the socket, and
    /// iteration throws why.
    /// - Throws: ``ErrandError/webSocketClosed(code:reason:)`` or ``ErrandError/cancelled`` once closed.
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

    /// Sends a ping and returns the seconds until its pong.
    /// - Throws: ``ErrandError/timedOut`` when no pong came within ``WebSocketOptions/pingTimeout``,
    ///   which also closes the socket.
    public func ping(_ payload: Data = Data()) async throws(ErrandError) -> TimeInterval {
        try await session.ping(payload)
    }

    /// Closes the socket with 1000: returns once the server answered, or after
    /// ``WebSocketOptions/closeTimeout``; iteration then ends normally.
    public func close() async {
        await session.close(.normalClosure, reason: "")
    }

    /// Closes the socket with `code` and `reason`: returns once the server answered, or after
    /// ``WebSocketOptions/closeTimeout``; iteration then ends normally.
    public func close(_ code: WebSocketCloseCode, reason: String = "") async throws(ErrandError) {
        await session.close(code, reason: reason)
    }

    /// Bytes handed to the connection that have not gone out yet.
    var queuedBytes: Int { session.queuedBytes }

    /// Reads messages; see the type's description.
    public func makeAsyncIterator() -> Iterator {
        Iterator(session: session, address: task.transportRequest?.url.absoluteString ?? "a server")
    }

    /// Reads a socket's messages.
    public struct Iterator: AsyncIteratorProtocol {
        let session: WebSocketSession
        /// Where the socket goes, for the error a second reader gets.
        let address: String
        private var hasClaimed = false

        init(session: WebSocketSession, address: String) {
            self.session = session
            self.address = address
        }

        /// The next message; `nil` once the server closed normally or the calling task was
        /// cancelled, which closes the socket with 1001.
        /// - Throws: ``ErrandError/serialization(_:)`` when another iterator already read the socket.
        public mutating func next() async throws(ErrandError) -> WebSocketMessage? {
            if !hasClaimed {
                guard session.inbox.claim() else {
                    throw .serialization(
                        "the WebSocket to \(address) was already read: its messages are consumed once")
                }
                hasClaimed = true
            }
            let message = try await session.inbox.next()
            if message == nil, Task.isCancelled {
                let session = session
                Task { await session.close(.goingAway, reason: "") }
            }
            return message
        }
    }
}
