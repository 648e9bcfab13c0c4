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
        if task.monitors.recordsWebSocketMessages {
            report = { @Sendable message, isSent in
                task.monitors.request(task, webSocketMessage: message, isSent: isSent)
            }
        }
        let session = WebSocketSession(
            connection: connection, options: options, compression: agreement.compression, timer: timer,
            report: report)
        self.session = session
        task.stream?.closing = { Task { await session.close(.goingAway, reason: "") } }
        Task { await Self.read(stream, into: session, compression: agreement.compression) }
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

    /// Sends `message`; returns once the connection took it.
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

    /// Closes the socket with `code` and `reason`: returns once the server answered, or after
    /// ``WebSocketOptions/closeTimeout``; iteration then ends normally.
    public func close(_ code: WebSocketCloseCode = .normalClosure, reason: String = "") async {
        await session.close(code, reason: reason)
    }

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

    /// Reads the connection until the peer's close frame or the end, frame by frame.
    private static func read(
        _ stream: ResponseStream, into session: WebSocketSession, compression: PerMessageDeflateParameters?
    ) async {
        let limit = session.options.maximumMessageSize
        var decoder = WebSocketFrameDecoder(
            maximumPayload: limit + limit / 64 + 64, allowsCompression: compression != nil)
        let inflater = compression.flatMap(PerMessageInflater.init)
        var assembler = WebSocketMessageAssembler(maximumMessageSize: limit, inflate: inflater?.inflate(_:limit:))
        // Held until the session has said how the socket ends: letting go of a stream's reader
        // early cancels its request, which would close the socket with 1001 first.
        var chunks = stream.makeAsyncIterator()
        defer { withExtendedLifetime(chunks) {} }
        do {
            // Read to the end even after the close frame, for the same reason.
            while let chunk = try await chunks.next() {
                guard !session.hasReceivedClose else { continue }
                decoder.append(chunk)
                while !session.hasReceivedClose, let frame = try decoder.nextFrame() {
                    guard let event = try assembler.receive(frame) else { continue }
                    await session.handle(event)
                }
            }
            session.end(error: nil, dropping: false)
        } catch let violation as WebSocketProtocolViolation {
            let error: ErrandError =
                violation.code == .messageTooBig
                ? .responseTooLarge(limit) : .webSocketClosed(code: violation.code, reason: violation.reason)
            session.fail(code: violation.code, reason: violation.reason, error: error)
        } catch {
            session.end(error: error as? ErrandError ?? .cancelled, dropping: false)
        }
    }
}
