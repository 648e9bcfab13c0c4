import Foundation

/// One WebSocket's life, from the `101` to the end, under one lock: the one owner of whether
/// the socket is open, closing or closed, and of every wait on it — a `send` waiting for room,
/// a `close` waiting for the peer's answer, a `ping` waiting for its pong, the consumer waiting
/// for the next message (``WebSocketInbox``) — each of which ends when the socket does, however
/// it does. The transport keeps only the bytes (``WebSocketConnection``).
///
/// No I/O happens under the lock: frames are made there, in order, and queued; one thread at a
/// time then hands the queue to the connection outside it (``flush()``), so that the order of
/// the frames on the wire is the order in which they were made and compressed.
final class WebSocketSession: Sendable {
    /// Where the socket is in its life.
    enum Phase: Equatable {
        case open
        /// The client sent its close frame and waits for the peer's.
        case closing
        /// Nothing more is sent; the connection ends, or ended.
        case closed
    }

    /// What the connection is handed, in order.
    enum Outgoing {
        /// A frame; a data frame's message is reported as sent, and its bytes count as queued
        /// until the connection took them.
        case frame(Data, message: WebSocketMessage?)
        /// A close frame, then the end of the connection, with the outcome for the request.
        case last(Data, grace: TimeInterval, error: ErrandError?)
        /// The end of the connection once what was written went out and the peer closed.
        case end(grace: TimeInterval, error: ErrandError?)
    }

    struct State {
        var phase = Phase.open
        var deflater: PerMessageDeflater?
        var hasReceivedClose = false
        var closeCode: WebSocketCloseCode?
        var closeReason: String?
        /// Why the socket ended without a close code: what a later `send` or `ping` throws.
        var endError: ErrandError?
        var outbox: [Outgoing] = []
        /// Whether a thread is handing the outbox to the connection: others only queue.
        var isFlushing = false
        /// Bytes of data frames queued or handed over that the connection has not yet taken.
        var queuedBytes = 0
        var sendWaiters: [CheckedContinuation<ErrandError?, Never>] = []
        var closeWaiters: [CheckedContinuation<Void, Never>] = []
        var cancelCloseTimeout: (@Sendable () -> Void)?
        var pings: [PendingPing] = []
        var nextPing: UInt64 = 0
        var cancelKeepAlive: (@Sendable () -> Void)?
        /// Whether the consumer holds the reading back: pongs cannot be read then either.
        var isReadingPaused = false
        /// When the reading last flowed again: a ping's time to answer counts from then at the earliest.
        var resumedAt: ContinuousClock.Instant?
    }

    /// Hears of each message sent (`true`) or received, in order: a HAR recording.
    typealias MessageReport = @Sendable (WebSocketMessage, _ isSent: Bool) -> Void

    let connection: any WebSocketConnection
    let options: WebSocketOptions
    let inbox: WebSocketInbox
    let timer: RetryTimer
    private let report: MessageReport?
    let state: Locked<State>
    /// Pauses or resumes the transfer.
    let transportFlow: @Sendable (_ pause: Bool) -> Void

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
        transportFlow = flow
        // The inbox tells the session, made after it, that the consumer fell behind or caught up;
        // the link goes when the socket ends.
        let flowOwner = Locked<WebSocketSession?>(nil)
        self.flowOwner = flowOwner
        inbox = WebSocketInbox(limit: options.maximumMessageSize) { flowOwner[\.self]?.readingPaused($0) }
        state = Locked(State(deflater: compression.flatMap(PerMessageDeflater.init)))
        flowOwner[\.self] = self
        state.withLock { scheduleKeepAlive(&$0) }
    }

    /// Where the inbox's pauses go: this session, until it ends.
    private let flowOwner: Locked<WebSocketSession?>

    /// The peer's close code once its close frame arrived, or the code the client failed the
    /// connection with; `nil` while open.
    var closeCode: WebSocketCloseCode? { state[\.closeCode] }
    /// The reason that came with ``closeCode``.
    var closeReason: String? { state[\.closeReason] }
    /// Bytes of messages sent that the connection has not taken yet.
    var queuedBytes: Int { state[\.queuedBytes] }
    var phase: Phase { state[\.phase] }

    // MARK: Sending

    /// Sends `message`: returns once it is queued for the connection, or, while more than
    /// ``sendBufferLimit`` bytes are, once enough of them went out or the socket ended.
    func send(_ message: WebSocketMessage) async throws(ErrandError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<ErrandError?, Never>) in
            let (outcome, flushes) = state.withLock { state -> (ErrandError??, Bool) in
                guard state.phase == .open else { return (.some(Self.closedError(state)), false) }
                var frame: WebSocketFrame
                switch message {
                case .text(let text): frame = WebSocketFrame(opcode: .text, payload: Data(text.utf8))
                case .binary(let data): frame = WebSocketFrame(opcode: .binary, payload: data)
                }
                // Compressed under the lock: the order of the frames is the order of compression.
                if let compressed = state.deflater?.deflate(frame.payload) {
                    frame.payload = compressed
                    frame.isCompressed = true
                }
                let bytes = frame.encoded(maskingKey: .random(in: 0...UInt32.max))
                state.queuedBytes += bytes.count
                let waits = state.queuedBytes > Self.sendBufferLimit
                if waits { state.sendWaiters.append(continuation) }
                return (waits ? nil : .some(nil), Self.queue(.frame(bytes, message: message), &state))
            }
            if flushes { flush() }
            if let outcome { continuation.resume(returning: outcome) }
        }
        if let result { throw result }
    }

    /// Queues `item` for the connection; `true` when the caller is to hand the queue over.
    static func queue(_ item: Outgoing, _ state: inout State) -> Bool {
        state.outbox.append(item)
        defer { state.isFlushing = true }
        return !state.isFlushing
    }

    /// Hands what is queued to the connection, in order, until nothing is.
    func flush() {
        while true {
            let items = state.withLock { state -> [Outgoing]? in
                guard !state.outbox.isEmpty else {
                    state.isFlushing = false
                    return nil
                }
                defer { state.outbox = [] }
                return state.outbox
            }
            guard let items else { return }
            for item in items { hand(item) }
        }
    }

    private func hand(_ item: Outgoing) {
        switch item {
        case .frame(let bytes, let message?):
            report?(message, true)
            connection.write(bytes) { [weak self] in self?.written(bytes.count, error: $0) }
        case .frame(let bytes, nil):
            connection.write(bytes) { _ in }
        case .last(let bytes, let grace, let error):
            connection.writeLast(bytes, within: grace, endingWith: error)
        case .end(let grace, let error):
            connection.close(within: grace, endingWith: error)
        }
    }

    /// The connection took `count` bytes, or failed: the sends waiting go on, or throw `error`.
    private func written(_ count: Int, error: ErrandError?) {
        let waiters = state.withLock { state -> [CheckedContinuation<ErrandError?, Never>] in
            state.queuedBytes -= count
            guard error != nil || state.queuedBytes <= Self.sendBufferLimit else { return [] }
            defer { state.sendWaiters = [] }
            return state.sendWaiters
        }
        for waiter in waiters { waiter.resume(returning: error) }
    }

    /// A control frame as the client sends it, masked.
    static func frame(_ opcode: WebSocketFrame.Opcode, _ payload: Data) -> Data {
        WebSocketFrame(opcode: opcode, payload: payload).encoded(maskingKey: .random(in: 0...UInt32.max))
    }

    /// What a `send` or `ping` on a socket that is not open throws.
    static func closedError(_ state: State) -> ErrandError {
        // A socket the client failed (a timeout, a violation) throws why; one the peer closed, its code.
        if let error = state.endError { return error }
        guard let code = state.closeCode else { return .cancelled }
        return .webSocketClosed(code: code, reason: state.closeReason ?? "")
    }

    // MARK: Closing

    /// Starts the closing handshake with `code`, unless one began; returns once the peer's close
    /// frame arrived, the connection ended, or ``WebSocketOptions/closeTimeout`` passed (then the
    /// connection is dropped).
    /// - Throws: ``ErrandError/serialization(_:)`` for a code no close frame may carry, before
    ///   anything is sent.
    func close(_ code: WebSocketCloseCode, reason: String) async throws(ErrandError) {
        guard code.isAllowedOnTheWire else {
            throw .serialization(
                "the close code \(code) may not be sent in a close frame (RFC 6455 §7.4): use 1000–1003, "
                    + "1007–1014 or 3000–4999")
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let outcome = state.withLock { state -> (waits: Bool, flushes: Bool) in
                guard state.phase != .closed else { return (false, false) }
                state.closeWaiters.append(continuation)
                return (true, startClosing(code, reason: reason, &state))
            }
            if outcome.waits { inbox.closing() }
            if outcome.flushes { flush() }
            if !outcome.waits { continuation.resume() }
        }
    }

    /// Sends the close frame and starts the close timeout, if the socket is open; `true` when the
    /// caller is to hand the queue over.
    private func startClosing(_ code: WebSocketCloseCode, reason: String, _ state: inout State) -> Bool {
        guard state.phase == .open else { return false }
        state.phase = .closing
        state.cancelCloseTimeout = timer.schedule(options.closeTimeout) { [weak self] in self?.closeTimedOut() }
        let closeFrame = Self.frame(.close, WebSocketFrame.closePayload(code, reason: reason))
        return Self.queue(.frame(closeFrame, message: nil), &state)
    }

    /// The peer did not answer the close frame in time: the connection is dropped at once.
    private func closeTimedOut() {
        end(error: nil, then: .end(grace: 0, error: nil))
    }

    /// Cancels the socket, as its task's `cancel()` does: an open socket closes with 1001 and a
    /// `send` waiting for room throws ``ErrandError/cancelled`` at once; one that is closing or
    /// already ended drops its connection at once, and a `close()` waiting returns.
    func cancel() {
        let (waiters, action) = state.withLock { state -> ([CheckedContinuation<ErrandError?, Never>], Bool?) in
            defer { state.sendWaiters = [] }
            guard state.phase == .open else { return (state.sendWaiters, nil) }
            return (state.sendWaiters, startClosing(.goingAway, reason: "", &state))
        }
        for waiter in waiters { waiter.resume(returning: .cancelled) }
        switch action {
        case nil:
            // Closing: the peer's answer is not waited for (a no-op once ended).
            end(error: nil, then: nil)
            connection.cancel()
        case let flushes?:
            inbox.closing()
            if flushes { flush() }
        }
    }

    /// The peer's close frame: answered unless the client closed first, then the connection ends.
    private func peerClosed(_ code: WebSocketCloseCode?, reason: String) {
        let answers = state.withLock { state -> Bool? in
            guard state.phase != .closed else { return nil }
            state.hasReceivedClose = true
            state.closeCode = code ?? .noStatusReceived
            state.closeReason = reason
            return state.phase == .open
        }
        guard let answers else { return }
        // A close the app started, 1000, or none at all is a normal end; any other code is the
        // consumer's to know about.
        let isNormal = !answers || code == nil || code == .normalClosure
        let closed = ErrandError.webSocketClosed(code: code ?? .noStatusReceived, reason: reason)
        // The request succeeded unless the server ended it for another reason than going away.
        let outcome = isNormal || code == .goingAway ? nil : closed
        let echo = Self.frame(.close, WebSocketFrame.closePayload(code, reason: ""))
        // After the close frames crossed, the server closes the connection (RFC 6455 §7.1.1).
        end(
            error: outcome,
            then: answers
                ? .last(echo, grace: options.closeTimeout, error: outcome)
                : .end(grace: options.closeTimeout, error: outcome))
        // Only now: a consumer that lets go of the socket as iteration ends would close it with
        // 1001 before the echo was queued.
        inbox.finish(isNormal ? nil : closed)
    }

    /// Fails the connection: a close frame with `code` if none was sent, then the end, with
    /// `error` for the consumer (``end(error:then:)`` tells it) and every wait.
    func fail(code: WebSocketCloseCode, reason: String, error: ErrandError) {
        let sends = state.withLock { state -> Bool? in
            guard state.phase != .closed else { return nil }
            if state.closeCode == nil { (state.closeCode, state.closeReason) = (code, reason) }
            return state.phase == .open
        }
        guard let sends else { return }
        let closeFrame = Self.frame(.close, WebSocketFrame.closePayload(code, reason: reason))
        end(
            error: error,
            then: sends
                ? .last(closeFrame, grace: options.closeTimeout, error: error)
                : .end(grace: options.closeTimeout, error: error))
    }

    /// The transport ended the connection (`nil`: the peer closed it): nothing is left to do on it.
    func connectionEnded(_ error: ErrandError?) {
        end(error: error, then: nil)
    }

    /// The socket is over: every wait ends, and the connection is handed `last`, if anything.
    private func end(error: ErrandError?, then last: Outgoing?) {
        let (ended, flushes) = state.withLock { state -> (State?, Bool) in
            guard state.phase != .closed else { return (nil, false) }
            // A connection that ends before its close frame came is a failure the consumer hears
            // of, unless the client closed and let go of it.
            if !state.hasReceivedClose, state.phase == .open || error != nil {
                state.endError = error ?? .transport(URLError(.networkConnectionLost))
            }
            state.phase = .closed
            let ended = state
            state.pings = []
            state.closeWaiters = []
            state.sendWaiters = []
            state.cancelKeepAlive = nil
            state.cancelCloseTimeout = nil
            return (ended, last.map { Self.queue($0, &state) } ?? false)
        }
        guard let ended else { return }
        flowOwner[\.self] = nil
        ended.cancelKeepAlive?()
        ended.cancelCloseTimeout?()
        if !ended.hasReceivedClose { inbox.finish(ended.endError) }
        let failure = error ?? Self.closedError(ended)
        for ping in ended.pings {
            ping.cancelTimeout?()
            ping.continuation.resume(returning: .failure(failure))
        }
        for waiter in ended.sendWaiters { waiter.resume(returning: failure) }
        for waiter in ended.closeWaiters { waiter.resume() }
        if flushes { flush() }
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

    /// Sends a control frame until the socket ended, not waiting for it to go out.
    func sendControl(_ opcode: WebSocketFrame.Opcode, _ payload: Data) {
        let flushes = state.withLock { state -> Bool in
            guard state.phase != .closed else { return false }
            return Self.queue(.frame(Self.frame(opcode, payload), message: nil), &state)
        }
        if flushes { flush() }
    }
}
