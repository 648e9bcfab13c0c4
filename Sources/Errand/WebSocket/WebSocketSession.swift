import Foundation

/// One open WebSocket's life, shared by the ``WebSocket`` an app holds and the task that reads
/// its connection: the frames sent, in order and compressed as agreed; pings and their pongs;
/// the closing handshake; and how the socket ended. Its state lives under one lock, and no I/O
/// happens under it: writes are only handed to the connection, which sends them in order.
final class WebSocketSession: Sendable {
    private struct PendingPing {
        let payload: Data
        let sentAt: ContinuousClock.Instant
        let continuation: CheckedContinuation<Result<TimeInterval, ErrandError>, Never>
        let cancelTimeout: @Sendable () -> Void
    }

    private struct State {
        var deflater: PerMessageDeflater?
        var hasSentClose = false
        var hasReceivedClose = false
        var hasEnded = false
        var closeCode: WebSocketCloseCode?
        var closeReason: String?
        /// Why the connection ended without a close code: what a later `send` or `ping` throws.
        var endError: ErrandError?
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        var pings: [PendingPing] = []
        var nextPing: UInt64 = 0
        var cancelKeepAlive: (@Sendable () -> Void)?
    }

    /// The bytes written but not yet taken by the connection, and the sends waiting for them to go
    /// out. A lock of its own: the connection may report a write done from inside `write`.
    private struct Outgoing {
        var bytes = 0
        var waiters: [CheckedContinuation<ErrandError?, Never>] = []
    }

    /// Hears of each message sent (`true`) or received, in order: a HAR recording.
    typealias MessageReport = @Sendable (WebSocketMessage, _ isSent: Bool) -> Void

    let connection: any WebSocketConnection
    let options: WebSocketOptions
    let inbox: WebSocketInbox
    private let timer: RetryTimer
    private let report: MessageReport?
    private let state: Locked<State>
    private let outgoing = Locked(Outgoing())

    /// Bytes queued for the connection past which `send` waits for them to go out.
    static let sendBufferLimit = 1 << 20

    init(
        connection: any WebSocketConnection, options: WebSocketOptions, compression: PerMessageDeflateParameters?,
        timer: RetryTimer, report: MessageReport? = nil, flow: @escaping @Sendable (_ pause: Bool) -> Void
    ) {
        self.connection = connection
        self.options = options
        self.timer = timer
        self.report = report
        inbox = WebSocketInbox(limit: max(options.maximumMessageSize, 1), flow: flow)
        state = Locked(State(deflater: compression.flatMap(PerMessageDeflater.init)))
        scheduleKeepAlive()
    }

    /// The peer's close code once its close frame arrived, or the code the client failed the
    /// connection with; `nil` while open.
    var closeCode: WebSocketCloseCode? { state[\.closeCode] }
    /// The reason that came with ``closeCode``.
    var closeReason: String? { state[\.closeReason] }

    /// Bytes handed to the connection that have not gone out yet.
    var queuedBytes: Int { outgoing[\.bytes] }

    // MARK: Sending

    /// Sends `message`: returns once it is queued for the connection, or, while more than
    /// ``sendBufferLimit`` bytes are, once enough of them went out. A write that fails later
    /// fails the connection, which the reader then reports.
    func send(_ message: WebSocketMessage) async throws(ErrandError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<ErrandError?, Never>) in
            let outcome = state.withLock { state -> ErrandError?? in
                guard !state.hasSentClose, !state.hasEnded else { return .some(closedError(state)) }
                var frame: WebSocketFrame
                switch message {
                case .text(let text): frame = WebSocketFrame(opcode: .text, payload: Data(text.utf8))
                case .binary(let data): frame = WebSocketFrame(opcode: .binary, payload: data)
                }
                if let compressed = state.deflater?.deflate(frame.payload) {
                    frame.payload = compressed
                    frame.isCompressed = true
                }
                let bytes = frame.encoded(maskingKey: .random(in: 0...UInt32.max))
                let waits = outgoing.withLock { outgoing in
                    outgoing.bytes += bytes.count
                    guard outgoing.bytes > Self.sendBufferLimit else { return false }
                    outgoing.waiters.append(continuation)
                    return true
                }
                // Handed over under the lock: the order of the writes is the order of compression,
                // and of the report.
                connection.write(bytes) { [weak self] in self?.written(bytes.count, error: $0) }
                report?(message, true)
                return waits ? nil : .some(nil)
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
        if let result { throw result }
    }

    /// The connection took `count` bytes, or failed: the sends waiting go on, or throw `error`.
    private func written(_ count: Int, error: ErrandError?) {
        let waiters = outgoing.withLock { outgoing -> [CheckedContinuation<ErrandError?, Never>] in
            outgoing.bytes -= count
            guard error != nil || outgoing.bytes <= Self.sendBufferLimit else { return [] }
            defer { outgoing.waiters = [] }
            return outgoing.waiters
        }
        for waiter in waiters { waiter.resume(returning: error) }
    }

    /// Sends a control frame, not waiting for it to go out.
    private func sendControl(_ opcode: WebSocketFrame.Opcode, _ payload: Data) {
        connection.write(Self.frame(opcode, payload)) { _ in }
    }

    /// A control frame as the client sends it, masked.
    private static func frame(_ opcode: WebSocketFrame.Opcode, _ payload: Data) -> Data {
        WebSocketFrame(opcode: opcode, payload: payload).encoded(maskingKey: .random(in: 0...UInt32.max))
    }

    private func closedError(_ state: State) -> ErrandError {
        guard let code = state.closeCode else { return state.endError ?? .cancelled }
        return .webSocketClosed(code: code, reason: state.closeReason ?? "")
    }

    // MARK: Pings

    /// Sends a ping and returns the seconds until its pong; past ``WebSocketOptions/pingTimeout``
    /// the socket is closed and this throws ``ErrandError/timedOut``.
    func ping(_ payload: Data) async throws(ErrandError) -> TimeInterval {
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<TimeInterval, ErrandError>, Never>) in
            let refusal = state.withLock { state -> ErrandError? in
                guard !state.hasSentClose, !state.hasEnded else { return closedError(state) }
                let cancelTimeout = timer.schedule(options.pingTimeout) { [weak self] in self?.pingTimedOut() }
                state.pings.append(
                    PendingPing(
                        payload: payload, sentAt: .now, continuation: continuation, cancelTimeout: cancelTimeout))
                return nil
            }
            if let refusal { return continuation.resume(returning: .failure(refusal)) }
            sendControl(.ping, payload)
        }
        return try result.get()
    }

    private func pongArrived(_ payload: Data) {
        let answered = state.withLock { state -> PendingPing? in
            guard let index = state.pings.firstIndex(where: { $0.payload == payload }) else { return nil }
            return state.pings.remove(at: index)
        }
        guard let answered else { return }
        answered.cancelTimeout()
        let elapsed = ContinuousClock.now - answered.sentAt
        let (seconds, attoseconds) = elapsed.components
        answered.continuation.resume(returning: .success(Double(seconds) + Double(attoseconds) / 1e18))
    }

    private func pingTimedOut() {
        fail(code: .goingAway, reason: "no pong within \(options.pingTimeout) s", error: .timedOut)
    }

    /// Pings every ``WebSocketOptions/pingInterval`` while the socket is open.
    private func scheduleKeepAlive() {
        guard let interval = options.pingInterval else { return }
        let cancel = timer.schedule(interval) { [weak self] in
            guard let self else { return }
            Task {
                var counter = self.state.withLock { state -> UInt64 in
                    state.nextPing &+= 1
                    return state.nextPing
                }
                _ = try? await self.ping(Data(bytes: &counter, count: 8))
            }
            self.scheduleKeepAlive()
        }
        let isOpen = state.withLock { state -> Bool in
            guard !state.hasEnded else { return false }
            state.cancelKeepAlive = cancel
            return true
        }
        if !isOpen { cancel() }
    }

    // MARK: Closing

    /// Starts the closing handshake, unless one began; returns once the peer's close frame
    /// arrived, the connection ended, or ``WebSocketOptions/closeTimeout`` passed (then the
    /// connection is dropped).
    func close(_ code: WebSocketCloseCode, reason: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let sends = state.withLock { state -> Bool? in
                guard !state.hasEnded, !state.hasReceivedClose else { return nil }
                state.closeWaiters.append(continuation)
                defer { state.hasSentClose = true }
                return !state.hasSentClose
            }
            guard let sends else { return continuation.resume() }
            guard sends else { return }
            sendControl(.close, WebSocketFrame.closePayload(code, reason: reason))
            _ = timer.schedule(options.closeTimeout) { [weak self] in
                self?.end(error: nil, dropping: true)
            }
        }
    }

    /// The peer's close frame: answered unless the client closed first, then the connection ends.
    private func peerClosed(_ code: WebSocketCloseCode?, reason: String) {
        let answers = state.withLock { state -> Bool in
            state.hasReceivedClose = true
            state.closeCode = code ?? .noStatusReceived
            state.closeReason = reason
            defer { state.hasSentClose = true }
            return !state.hasSentClose
        }
        // A close the app started, 1000, or none at all is a normal end; any other code is the
        // consumer's to know about.
        let isNormal = !answers || code == nil || code == .normalClosure
        let closed = ErrandError.webSocketClosed(code: code ?? .noStatusReceived, reason: reason)
        inbox.finish(isNormal ? nil : closed)
        // The request succeeded unless the server ended it for another reason than going away.
        let outcome = isNormal || code == .goingAway ? nil : closed
        // The connection drops after the echo went out.
        if answers {
            connection.writeLast(Self.frame(.close, WebSocketFrame.closePayload(code, reason: "")), endingWith: outcome)
        }
        end(error: outcome, dropping: !answers)
    }

    /// Fails the connection: a close frame with `code` if none was sent, then the end, with
    /// `error` for the consumer.
    func fail(code: WebSocketCloseCode, reason: String, error: ErrandError) {
        let sends = state.withLock { state -> Bool in
            guard !state.hasEnded else { return false }
            if state.closeCode == nil { (state.closeCode, state.closeReason) = (code, reason) }
            defer { state.hasSentClose = true }
            return !state.hasSentClose
        }
        inbox.finish(error)
        // The connection drops after the close frame went out: a failed connection is not kept.
        if sends {
            connection.writeLast(
                Self.frame(.close, WebSocketFrame.closePayload(code, reason: reason)), endingWith: error)
        }
        end(error: error, dropping: !sends)
    }

    /// The connection is over: every waiter is told, and with `dropping` the transport lets go of it.
    func end(error: ErrandError?, dropping: Bool) {
        let ended = state.withLock { state -> State? in
            guard !state.hasEnded else { return nil }
            state.hasEnded = true
            // A connection that ends before its close frame came is a failure the consumer hears
            // of, unless the client closed and let go of it.
            if !state.hasReceivedClose, !state.hasSentClose || error != nil {
                state.endError = error ?? .transport(URLError(.networkConnectionLost))
            }
            let ended = state
            state.pings = []
            state.closeWaiters = []
            state.cancelKeepAlive = nil
            return ended
        }
        guard let ended else { return }
        ended.cancelKeepAlive?()
        if !ended.hasReceivedClose { inbox.finish(ended.endError) }
        for ping in ended.pings {
            ping.cancelTimeout()
            ping.continuation.resume(returning: .failure(error ?? closedError(ended)))
        }
        for waiter in ended.closeWaiters { waiter.resume() }
        if dropping { connection.drop(endingWith: error) }
    }

    // MARK: Receiving

    /// Acts on the events the reader assembled from one read, in order; the messages among them
    /// reach the inbox together.
    func handle(_ events: [WebSocketMessageAssembler.Event]) {
        var messages: [WebSocketMessage] = []
        for event in events {
            if case .message(let message) = event {
                report?(message, false)
                messages.append(message)
                continue
            }
            // A control frame acts after the messages that came before it.
            inbox.put(messages)
            messages = []
            switch event {
            case .message: break
            case .ping(let payload): sendControl(.pong, payload)
            case .pong(let payload): pongArrived(payload)
            case .close(let code, let reason): peerClosed(code, reason: reason)
            }
        }
        inbox.put(messages)
    }
}
