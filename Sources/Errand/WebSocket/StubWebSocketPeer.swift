import Foundation

/// The server's side of a WebSocket a ``StubTransport`` opened: a script sends, closes or drops,
/// and reads what the client sent, so socket code runs in unit tests without a server.
///
/// ```swift
/// let agent = NetworkAgent(transport: StubTransport(webSocket: { request in
///     .accept { peer in
///         peer.send(.text(#"{"price":101.5}"#))
///         for await message in peer.messages { peer.send(message) }  // echo until the client closes
///     }
/// }))
/// ```
///
/// The peer answers pings with pongs and a client's close frame with its own, as a server must.
/// When the script returns with the socket still open, the peer closes it with 1000, as most
/// servers do when their handler returns. Nothing is compressed.
public final class StubWebSocketPeer: Sendable {
    private struct State {
        var decoder = WebSocketFrameDecoder(maximumPayload: Int.max, allowsCompression: false, readsClientFrames: true)
        var assembler = WebSocketMessageAssembler(maximumMessageSize: Int.max)
        var hasSentClose = false
        var hasReceivedClose = false
        var clientCloseCode: WebSocketCloseCode?
        /// The client's events; `nil` once the connection ended.
        var events: (@Sendable (TransportEvent) -> Void)?
    }

    /// The handshake as the client sent it: URL, header fields, the credential.
    public let request: TransportRequest
    /// The client's messages, in order; they end when the client's close frame arrives or the
    /// connection ends.
    public let messages: AsyncStream<WebSocketMessage>
    private let received: AsyncStream<WebSocketMessage>.Continuation
    private let state: Locked<State>
    /// Events reach the client one at a time, in the order they were produced.
    private let delivery = DispatchQueue(label: "errand.stub-websocket")

    init(request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) {
        self.request = request
        (messages, received) = AsyncStream.makeStream(of: WebSocketMessage.self)
        state = Locked(State(events: events))
    }

    /// The code of the client's close frame once it arrived (1005 for one without a code);
    /// `nil` before.
    public var clientCloseCode: WebSocketCloseCode? { state[\.clientCloseCode] }

    /// Sends `message` to the client. Does nothing once the peer closed or the connection ended.
    public func send(_ message: WebSocketMessage) {
        let frame =
            switch message {
            case .text(let text): WebSocketFrame(opcode: .text, payload: Data(text.utf8))
            case .binary(let data): WebSocketFrame(opcode: .binary, payload: data)
            }
        state.withLock { state in
            guard !state.hasSentClose else { return }
            deliver(.body(frame.encoded(maskingKey: nil)), &state)
        }
    }

    /// Starts the closing handshake with `code` (default 1000) and `reason` (default none); the
    /// client answers and then ends the connection.
    public func close(_ code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        state.withLock { state in
            guard !state.hasSentClose else { return }
            state.hasSentClose = true
            let frame = WebSocketFrame(opcode: .close, payload: WebSocketFrame.closePayload(code, reason: reason))
            deliver(.body(frame.encoded(maskingKey: nil)), &state)
        }
    }

    /// Ends the connection without a close frame, as a server that crashed or a network that
    /// failed: the client's iteration throws ``ErrandError/transport(_:)``.
    public func drop() {
        end(.transport(URLError(.networkConnectionLost)))
    }

    // MARK: The client's side, through its connection

    /// Answers the handshake with `101` and `headers`.
    func accept(_ headers: [String: String]) {
        state.withLock { deliver(.responseHead(statusCode: 101, headers: headers), &$0) }
    }

    /// Takes bytes the client wrote: frames answered as a server must.
    func clientWrote(_ bytes: Data) {
        var messages: [WebSocketMessage] = []
        let closes = state.withLock { state -> Bool in
            guard state.events != nil, !state.hasReceivedClose else { return false }
            state.decoder.append(bytes)
            do {
                while !state.hasReceivedClose, let frame = try state.decoder.nextFrame() {
                    guard let event = try state.assembler.receive(frame) else { continue }
                    switch event {
                    case .message(let message): messages.append(message)
                    case .ping(let payload): deliver(.body(Self.frame(.pong, payload)), &state)
                    case .pong: break
                    case .close(let code, _):
                        state.hasReceivedClose = true
                        state.clientCloseCode = code ?? .noStatusReceived
                        if !state.hasSentClose {
                            state.hasSentClose = true
                            deliver(.body(Self.frame(.close, WebSocketFrame.closePayload(code, reason: ""))), &state)
                        }
                    }
                }
            } catch {
                // A client that breaks the protocol is a bug in it: the connection goes, as a server would drop it.
                state.hasReceivedClose = true
                deliver(.completed(.transport(URLError(.networkConnectionLost))), &state)
                state.events = nil
            }
            return state.hasReceivedClose
        }
        for message in messages { received.yield(message) }
        if closes { received.finish() }
    }

    /// Ends the connection with `error` for the client: `nil` ends its request normally.
    func end(_ error: ErrandError?) {
        state.withLock { state in
            guard state.events != nil else { return }
            deliver(.completed(error), &state)
            state.events = nil
        }
        received.finish()
    }

    /// Closes with 1000 unless the script closed or the connection ended.
    func scriptReturned() {
        close()
    }

    /// Queues `event` for the client; called under the lock, so events keep their order.
    private func deliver(_ event: TransportEvent, _ state: inout State) {
        guard let events = state.events else { return }
        delivery.async { events(event) }
    }

    private static func frame(_ opcode: WebSocketFrame.Opcode, _ payload: Data) -> Data {
        WebSocketFrame(opcode: opcode, payload: payload).encoded(maskingKey: nil)
    }
}
