import Foundation

/// Pings, their pongs and the keep-alive. A ping's time to answer counts only while the reading
/// flows: a consumer that holds the socket back holds its pongs back too, which is no sign that
/// the peer went away (a slow consumer stops the reading, nothing more).
extension WebSocketSession {
    struct PendingPing {
        let id: UInt64
        let payload: Data
        let sentAt: ContinuousClock.Instant
        let continuation: CheckedContinuation<Result<TimeInterval, ErrandError>, Never>
        /// Stops its timeout; `nil` while the reading is paused, when none runs.
        var cancelTimeout: (@Sendable () -> Void)?
    }

    /// Sends a ping and returns the seconds until its pong. An empty `payload` is replaced by 8
    /// bytes of the socket's own, so that only the pong to this ping answers it.
    /// - Throws: ``ErrandError/serialization(_:)`` for a payload over 125 bytes, before anything is
    ///   sent; ``ErrandError/timedOut`` past ``WebSocketOptions/pingTimeout`` (which closes the
    ///   socket); why the socket ended, once it has.
    func ping(_ payload: Data) async throws(ErrandError) -> TimeInterval {
        guard payload.count <= WebSocketFrame.maximumControlPayload else {
            throw .serialization(
                "a WebSocket ping carries at most \(WebSocketFrame.maximumControlPayload) bytes; this one has \(payload.count)"
            )
        }
        let result = await withCheckedContinuation {
            (continuation: CheckedContinuation<Result<TimeInterval, ErrandError>, Never>) in
            let outcome = state.withLock { state -> Result<Bool, ErrandError> in
                guard state.phase == .open else { return .failure(Self.closedError(state)) }
                state.nextPing &+= 1
                let id = state.nextPing
                var sent = payload
                if sent.isEmpty { sent = withUnsafeBytes(of: id.bigEndian) { Data($0) } }
                let cancelTimeout = state.isReadingPaused ? nil : scheduleTimeout(ofPing: id)
                state.pings.append(
                    PendingPing(
                        id: id, payload: sent, sentAt: .now, continuation: continuation, cancelTimeout: cancelTimeout))
                return .success(Self.queue(.frame(Self.frame(.ping, sent), message: nil), &state))
            }
            switch outcome {
            case .failure(let error): continuation.resume(returning: .failure(error))
            case .success(let flushes): if flushes { flush() }
            }
        }
        return try result.get()
    }

    /// Pings sent whose pong has not come.
    var pendingPingCount: Int { state.withLock { $0.pings.count } }

    private func scheduleTimeout(ofPing id: UInt64, after seconds: TimeInterval? = nil) -> @Sendable () -> Void {
        timer.schedule(seconds ?? options.pingTimeout) { [weak self] in self?.pingTimedOut(id) }
    }

    /// The pong whose payload is that of a ping waiting: the earliest such ping is answered.
    func pongArrived(_ payload: Data) {
        let answered = state.withLock { state -> PendingPing? in
            guard let index = state.pings.firstIndex(where: { $0.payload == payload }) else { return nil }
            return state.pings.remove(at: index)
        }
        guard let answered else { return }
        answered.cancelTimeout?()
        let (seconds, attoseconds) = (ContinuousClock.now - answered.sentAt).components
        answered.continuation.resume(returning: .success(Double(seconds) + Double(attoseconds) / 1e18))
    }

    private func pingTimedOut(_ id: UInt64) {
        let expired = state.withLock { state -> Bool in
            guard let index = state.pings.firstIndex(where: { $0.id == id }) else { return false }
            // A timeout that fired as the reading paused waits for the reading to flow again.
            guard !state.isReadingPaused else {
                state.pings[index].cancelTimeout = nil
                return false
            }
            // One that fired sooner than a whole timeout after the reading flowed again waits the rest.
            if let resumedAt = state.resumedAt {
                let (seconds, attoseconds) = (ContinuousClock.now - resumedAt).components
                let waited = Double(seconds) + Double(attoseconds) / 1e18
                if waited < options.pingTimeout {
                    state.pings[index].cancelTimeout = scheduleTimeout(ofPing: id, after: options.pingTimeout - waited)
                    return false
                }
            }
            return true
        }
        guard expired else { return }
        fail(code: .goingAway, reason: "no pong within \(options.pingTimeout) s", error: .timedOut)
    }

    /// Pings every ``WebSocketOptions/pingInterval`` while the socket is open and its reading flows.
    func scheduleKeepAlive(_ state: inout State) {
        guard let interval = options.pingInterval, state.phase == .open, !state.isReadingPaused else { return }
        state.cancelKeepAlive?()
        state.cancelKeepAlive = timer.schedule(interval) { [weak self] in self?.keepAliveFired() }
    }

    private func keepAliveFired() {
        let isOpen = state.withLock { state -> Bool in
            // One that comes due while the reading is paused is scheduled anew once it flows.
            state.cancelKeepAlive = nil
            guard state.phase == .open, !state.isReadingPaused else { return false }
            scheduleKeepAlive(&state)
            return true
        }
        guard isOpen else { return }
        Task { [weak self] in _ = try? await self?.ping(Data()) }
    }

    /// The consumer fell behind (`true`) or caught up: the transfer pauses or resumes, and while
    /// it is paused no ping times out and no keep-alive goes out; once it flows again each ping
    /// waiting has its whole ``WebSocketOptions/pingTimeout`` anew, and a keep-alive that came
    /// due meanwhile its whole interval. No timer is made anew at each pause: a consumer just
    /// keeping up pauses as often as half the message limit arrives, and each timer lives its
    /// whole interval, cancelled or not; one that fires early waits the rest.
    func readingPaused(_ pause: Bool) {
        state.withLock { state in
            guard state.isReadingPaused != pause, state.phase != .closed else { return }
            state.isReadingPaused = pause
            guard !pause else { return }
            state.resumedAt = .now
            for index in state.pings.indices where state.pings[index].cancelTimeout == nil {
                state.pings[index].cancelTimeout = scheduleTimeout(ofPing: state.pings[index].id)
            }
            if state.cancelKeepAlive == nil { scheduleKeepAlive(&state) }
        }
        transportFlow(pause)
    }
}
