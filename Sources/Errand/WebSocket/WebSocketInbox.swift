import Foundation

/// The messages a WebSocket received that its consumer has not taken: while they hold `limit`
/// bytes or more, each message counted ``messageOverhead`` bytes larger, the transfer is paused,
/// so a consumer that falls behind stops the reading, and TCP then pushes back on the server.
final class WebSocketInbox: Sendable {
    private struct State {
        var messages: [WebSocketMessage] = []
        var first = 0
        var bytes = 0
        /// How the messages end, once they do: `nil` normally.
        var end: ErrandError??
        var consumer: CheckedContinuation<Result<WebSocketMessage?, ErrandError>, Never>?
        /// Whether the transfer was told to pause and not yet to resume.
        var isPaused = false
        var isClaimed = false
        /// Whether the client closed: the reading never pauses again, and what does not fit goes.
        var isClosing = false
    }

    private let state = Locked(State())
    private let limit: Int
    /// Pauses (`true`) or resumes the transfer, outside the lock.
    private let flow: @Sendable (_ pause: Bool) -> Void

    init(limit: Int, flow: @escaping @Sendable (_ pause: Bool) -> Void) {
        self.limit = limit
        self.flow = flow
    }

    /// Makes the caller the one consumer: `false` when another iterator already is.
    func claim() -> Bool {
        state.withLock { state in
            defer { state.isClaimed = true }
            return !state.isClaimed
        }
    }

    /// Hands `messages` to the consumer, pausing the transfer when the consumer is `limit` bytes
    /// behind. A chunk's messages come together, so that a consumer woken for the first finds
    /// the others waiting rather than sleeping again for each.
    func put(_ messages: [WebSocketMessage]) {
        guard !messages.isEmpty else { return }
        let (consumer, pauses) = state.withLock {
            state -> (CheckedContinuation<Result<WebSocketMessage?, ErrandError>, Never>?, Bool) in
            let consumer = state.consumer
            state.consumer = nil
            for message in messages.dropFirst(consumer == nil ? 0 : 1) {
                if state.isClosing, state.bytes >= limit { continue }
                state.messages.append(message)
                state.bytes += Self.size(of: message)
            }
            guard state.bytes >= limit, state.end == nil, !state.isPaused, !state.isClosing else {
                return (consumer, false)
            }
            state.isPaused = true
            return (consumer, true)
        }
        consumer?.resume(returning: .success(messages[0]))
        guard pauses else { return }
        flow(true)
        // The consumer may have caught up, and resumed, before this pause went out.
        if !state[\.isPaused] { flow(false) }
    }

    /// The client closed: the peer's answer may come behind more than a consumer that holds the
    /// reading back would ever take, so the reading resumes and never pauses again, and what
    /// arrives past `limit` bytes is dropped. The messages held stay the consumer's.
    func closing() {
        let resumes = state.withLock { state in
            defer { (state.isClosing, state.isPaused) = (true, false) }
            return state.isPaused
        }
        if resumes { flow(false) }
    }

    /// Ends the messages after those waiting: `nil` normally, else the error the consumer gets.
    /// Only the first end counts.
    func finish(_ error: ErrandError?) {
        let consumer = state.withLock { state in
            if state.end == nil { state.end = .some(error) }
            defer { state.consumer = nil }
            return state.messages.count > state.first ? nil : state.consumer
        }
        consumer?.resume(returning: error.map { .failure($0) } ?? .success(nil))
    }

    /// The next message; `nil` at the end. Cancelling the calling task ends the wait with `nil`.
    func next() async throws(ErrandError) -> WebSocketMessage? {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                var resumes = false
                let ready = state.withLock { state -> Result<WebSocketMessage?, ErrandError>? in
                    if state.messages.count > state.first { return .success(take(&state, resuming: &resumes)) }
                    if let end = state.end { return end.map { .failure($0) } ?? .success(nil) }
                    if Task.isCancelled { return .success(nil) }
                    state.consumer = continuation
                    return nil
                }
                if resumes { flow(false) }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            let consumer = state.withLock { state in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(returning: .success(nil))
        }
        return try result.get()
    }

    /// Takes the oldest message; `resumes` when this made room for a paused transfer.
    private func take(_ state: inout State, resuming resumes: inout Bool) -> WebSocketMessage {
        let message = state.messages[state.first]
        // Let go of it now: a reader that stays ahead keeps the inbox from ever emptying.
        state.messages[state.first] = .binary(Data())
        state.first += 1
        state.bytes -= Self.size(of: message)
        if state.first == state.messages.count {
            state.messages.removeAll(keepingCapacity: true)
            state.first = 0
        } else if state.first >= 64, state.first * 2 >= state.messages.count {
            state.messages.removeFirst(state.first)
            state.first = 0
        }
        if state.isPaused, state.bytes <= limit / 2 {
            state.isPaused = false
            resumes = true
        }
        return message
    }

    /// What holding a message costs besides its bytes: a flood of empty messages, two bytes each
    /// on the wire, must fill the inbox too.
    static let messageOverhead = 64

    private static func size(of message: WebSocketMessage) -> Int {
        switch message {
        case .text(let text): text.utf8.count + messageOverhead
        case .binary(let data): data.count + messageOverhead
        }
    }
}
