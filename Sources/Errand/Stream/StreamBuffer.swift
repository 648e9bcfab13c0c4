import Foundation

/// The chunks of a streamed body between the transport, which pushes them as they arrive, and
/// the one consumer that pulls them.
///
/// Past `limit` bytes waiting it asks for the transfer to pause, and once the consumer has taken
/// half of them, to resume: memory stays flat however long the stream and slow the consumer.
final class StreamBuffer: Sendable {
    private struct State {
        var chunks: [Data] = []
        /// The next chunk to hand out; chunks before it are spent.
        var head = 0
        var bufferedBytes = 0
        /// The most bytes ever waiting at once.
        var peakBufferedBytes = 0
        /// Set once the body ended or failed; chunks still waiting are handed out first, except
        /// after ``cancel(with:)``, which drops them.
        var end: ErrandError??
        var waiter: CheckedContinuation<Result<Data?, ErrandError>, Never>?
        var hasReceivedBody = false
        var isClaimed = false
        /// Whether the transfer should be paused, and whether it is, as last told: the two differ
        /// while a change is being passed on.
        var wantsPause = false
        var isPaused = false
        var isApplyingFlow = false
    }

    private let state = Locked(State())
    private let limit: Int
    /// Pauses (`true`) or resumes (`false`) the transfer. Calls come one at a time, in order.
    private let flow: @Sendable (_ pause: Bool) -> Void

    init(limit: Int, flow: @escaping @Sendable (_ pause: Bool) -> Void) {
        self.limit = max(limit, 1)
        self.flow = flow
    }

    /// Whether any body byte reached the buffer: from then on the stream can no longer be retried
    /// without the consumer seeing bytes twice.
    var hasReceivedBody: Bool { state[\.hasReceivedBody] }

    /// The most bytes that ever waited for the consumer at once: flow control keeps it near the limit.
    var peakBufferedBytes: Int { state[\.peakBufferedBytes] }

    /// Whether the transfer was last told to pause.
    var isPaused: Bool { state[\.isPaused] }

    /// Marks the buffer as taken by its one consumer; `false` when it already was.
    func claim() -> Bool {
        state.withLock { state in
            defer { state.isClaimed = true }
            return !state.isClaimed
        }
    }

    /// Adds a chunk that arrived; ignored once the stream ended.
    func push(_ chunk: Data) {
        guard !chunk.isEmpty else { return }
        let waiter = state.withLock { state -> CheckedContinuation<Result<Data?, ErrandError>, Never>? in
            guard state.end == nil else { return nil }
            state.hasReceivedBody = true
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.chunks.append(chunk)
            state.bufferedBytes += chunk.count
            state.peakBufferedBytes = max(state.peakBufferedBytes, state.bufferedBytes)
            if state.bufferedBytes > limit { state.wantsPause = true }
            return nil
        }
        if let waiter {
            waiter.resume(returning: .success(chunk))
        } else {
            applyFlow()
        }
    }

    /// Ends the stream: after the chunks still waiting, the consumer gets `nil`, or `error`.
    func finish(_ error: ErrandError?) {
        end(error, droppingChunks: false)
    }

    /// Ends the stream at once with `error`, dropping what waits: the consumer stopped.
    func cancel(with error: ErrandError) {
        end(error, droppingChunks: true)
    }

    /// The next chunk, `nil` at the end, or why the stream failed; waits while none is there.
    func next() async -> Result<Data?, ErrandError> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Result<Data?, ErrandError>? in
                if state.head < state.chunks.count {
                    return .success(Self.take(&state, limit: limit))
                }
                if let end = state.end {
                    return end.map { .failure($0) } ?? .success(nil)
                }
                state.waiter = continuation
                return nil
            }
            if let ready {
                continuation.resume(returning: ready)
                applyFlow()
            }
        }
    }

    private func end(_ error: ErrandError?, droppingChunks: Bool) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Data?, ErrandError>, Never>? in
            if droppingChunks {
                // A cancel overrides a finish: what was left is dropped all the same.
                state.chunks = []
                state.head = 0
                state.bufferedBytes = 0
            } else if state.end != nil {
                return nil
            }
            state.end = .some(error)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: error.map { .failure($0) } ?? .success(nil))
    }

    /// Takes the chunk at `head`, and lifts the pause once half the limit is free again.
    private static func take(_ state: inout State, limit: Int) -> Data {
        let chunk = state.chunks[state.head]
        state.chunks[state.head] = Data()
        state.head += 1
        state.bufferedBytes -= chunk.count
        if state.head == state.chunks.count {
            state.chunks.removeAll(keepingCapacity: true)
            state.head = 0
        } else if state.head >= 64, state.head * 2 >= state.chunks.count {
            state.chunks.removeFirst(state.head)
            state.head = 0
        }
        if state.wantsPause, state.bufferedBytes <= limit / 2 { state.wantsPause = false }
        return chunk
    }

    /// Passes the wanted pause state on, outside the lock and one change at a time: whoever finds
    /// nobody passing changes on does it until what was passed on is what is wanted, so that a
    /// resume can never overtake the pause it lifts.
    private func applyFlow() {
        let starts = state.withLock { state -> Bool in
            guard !state.isApplyingFlow, state.isPaused != state.wantsPause else { return false }
            state.isApplyingFlow = true
            return true
        }
        guard starts else { return }
        while true {
            let change = state.withLock { state -> Bool? in
                guard state.isPaused != state.wantsPause else {
                    state.isApplyingFlow = false
                    return nil
                }
                state.isPaused = state.wantsPause
                return state.isPaused
            }
            guard let change else { return }
            flow(change)
        }
    }
}
