import Foundation

/// The messages a WebSocket received that its consumer has not taken: the reader waits while
/// they hold `limit` bytes or more, so a consumer that falls behind stops the reading, and TCP
/// then pushes back on the server.
final class WebSocketInbox: Sendable {
    private struct State {
        var messages: [WebSocketMessage] = []
        var first = 0
        var bytes = 0
        /// How the messages end, once they do: `nil` normally.
        var end: ErrandError??
        var consumer: CheckedContinuation<Result<WebSocketMessage?, ErrandError>, Never>?
        var reader: CheckedContinuation<Void, Never>?
        var isClaimed = false
    }

    private let state = Locked(State())
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    /// Makes the caller the one consumer: `false` when another iterator already is.
    func claim() -> Bool {
        state.withLock { state in
            defer { state.isClaimed = true }
            return !state.isClaimed
        }
    }

    /// Hands `message` to the consumer; returns once there is room for more.
    func put(_ message: WebSocketMessage) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (consumer, isFull) = state.withLock {
                state -> (CheckedContinuation<Result<WebSocketMessage?, ErrandError>, Never>?, Bool) in
                if let consumer = state.consumer {
                    state.consumer = nil
                    return (consumer, false)
                }
                state.messages.append(message)
                state.bytes += Self.size(of: message)
                guard state.bytes >= limit, state.end == nil else { return (nil, false) }
                state.reader = continuation
                return (nil, true)
            }
            consumer?.resume(returning: .success(message))
            if !isFull { continuation.resume() }
        }
    }

    /// Ends the messages after those waiting: `nil` normally, else the error the consumer gets.
    /// Only the first end counts.
    func finish(_ error: ErrandError?) {
        let (consumer, reader) = state.withLock { state in
            if state.end == nil { state.end = .some(error) }
            defer { (state.consumer, state.reader) = (nil, nil) }
            return (state.messages.count > state.first ? nil : state.consumer, state.reader)
        }
        consumer?.resume(returning: error.map { .failure($0) } ?? .success(nil))
        reader?.resume()
    }

    /// The next message; `nil` at the end. Cancelling the calling task ends the wait with `nil`.
    func next() async throws(ErrandError) -> WebSocketMessage? {
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                var reader: CheckedContinuation<Void, Never>?
                let ready = state.withLock { state -> Result<WebSocketMessage?, ErrandError>? in
                    if state.messages.count > state.first { return .success(take(&state, waking: &reader)) }
                    if let end = state.end { return end.map { .failure($0) } ?? .success(nil) }
                    if Task.isCancelled { return .success(nil) }
                    state.consumer = continuation
                    return nil
                }
                reader?.resume()
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

    /// Takes the oldest message; `reader` is the reader to wake, when this made room for it.
    private func take(_ state: inout State, waking reader: inout CheckedContinuation<Void, Never>?)
        -> WebSocketMessage
    {
        let message = state.messages[state.first]
        state.first += 1
        state.bytes -= Self.size(of: message)
        if state.first == state.messages.count {
            state.messages.removeAll(keepingCapacity: true)
            state.first = 0
        }
        if state.bytes < limit {
            reader = state.reader
            state.reader = nil
        }
        return message
    }

    private static func size(of message: WebSocketMessage) -> Int {
        switch message {
        case .text(let text): text.utf8.count
        case .binary(let data): data.count
        }
    }
}
