import Foundation

/// Reads a WebSocket's connection as its bytes arrive, on the thread that delivers them (the
/// stream's sink): frames decoded, messages joined and decompressed, and each event handed to
/// the session there and then. A lone message then wakes one thread, its consumer's.
final class WebSocketReader: Sendable {
    private struct State {
        var decoder: WebSocketFrameDecoder
        var assembler: WebSocketMessageAssembler
        /// Held until the session has said how the socket ends: a stream let go of cancels its
        /// request, which would close the socket with 1001 first.
        var stream: ResponseStream?
        /// The peer's close frame or a violation came: nothing after counts.
        var hasStopped = false
    }

    private let session: WebSocketSession
    private let state: Locked<State>

    init(_ stream: ResponseStream, into session: WebSocketSession, compression: PerMessageDeflateParameters?) {
        self.session = session
        let limit = session.options.maximumMessageSize
        let inflater = compression.flatMap(PerMessageInflater.init)
        state = Locked(
            State(
                decoder: WebSocketFrameDecoder(
                    maximumPayload: WebSocketMessageAssembler.compressedLimit(of: limit),
                    allowsCompression: compression != nil),
                assembler: WebSocketMessageAssembler(maximumMessageSize: limit, inflate: inflater?.inflate(_:limit:)),
                stream: stream))
    }

    /// Takes what the stream delivers: frames until the peer's close frame, then its end.
    func receive(_ delivery: StreamBuffer.Delivery) {
        switch delivery {
        case .chunk(let chunk):
            let (events, violation) = state.withLock { Self.events(in: chunk, &$0) }
            // Handled outside the lock, in order: the deliveries come one at a time.
            session.handle(events)
            guard let violation else { return }
            let limit = session.options.maximumMessageSize
            let error: ErrandError =
                violation.code == .messageTooBig
                ? .responseTooLarge(limit) : .webSocketClosed(code: violation.code, reason: violation.reason)
            session.fail(code: violation.code, reason: violation.reason, error: error)
        case .end(let error):
            // Read to the end even after the close frame: the end says how the connection went.
            session.connectionEnded(error)
            state.withLock { $0.stream = nil }
        }
    }

    /// The events `chunk` completes, and the violation that stopped the reading, if one did.
    private static func events(in chunk: Data, _ state: inout State)
        -> ([WebSocketMessageAssembler.Event], WebSocketProtocolViolation?)
    {
        guard !state.hasStopped else { return ([], nil) }
        state.decoder.append(chunk)
        var events: [WebSocketMessageAssembler.Event] = []
        do {
            while let frame = try state.decoder.nextFrame() {
                guard let event = try state.assembler.receive(frame) else { continue }
                events.append(event)
                if case .close = event {
                    state.hasStopped = true
                    break
                }
            }
            return (events, nil)
        } catch {
            state.hasStopped = true
            return (events, error)
        }
    }
}
