import Foundation

/// The chunks of a streamed body between the transport, which pushes them as they arrive, and
/// the one consumer that pulls them.
///
/// Past `limit` bytes waiting it asks for the transfer to pause, and once the consumer has taken
/// half of them, to resume: memory stays flat however long the stream and slow the consumer.
///
/// A reader that must see every byte as it comes — a WebSocket's, which answers pings whether or
/// not the app reads — takes the chunks on the producer's thread instead (``divert(to:)``),
/// which saves a hand-off between threads per chunk; it then pauses the transfer itself.
///
/// Only the producer pauses, and it does so at every chunk that finds the buffer full, so a
/// resume that reaches the transport late costs one chunk, never the limit. A pause that
/// reaches it after the consumer emptied the buffer is undone by the producer itself: it checks
/// again once its pause went out.
final class StreamBuffer: Sendable {
    /// What a diverted buffer hands its sink: a chunk, then once the end (`nil` normally, else why).
    enum Delivery {
        case chunk(Data)
        case end(ErrandError?)
    }

    /// Takes a diverted buffer's deliveries, one at a time and in order.
    typealias Sink = @Sendable (Delivery) -> Void

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
        /// The trailer fields the body ended with; set with `end`.
        var trailers: [String: String] = [:]
        /// Whether the consumer (or the sink) was handed the end: only then are `trailers` shown.
        var isEndTaken = false
        var waiter: CheckedContinuation<Result<Data?, ErrandError>, Never>?
        var hasReceivedBody = false
        var isClaimed = false
        /// Whether the transfer was asked to pause and not yet to resume.
        var isPaused = false
        /// Where chunks go instead of to an iterator, until the end was handed over.
        var sink: Sink?
        /// Whether a thread is handing chunks to the sink: others only queue theirs.
        var isSinking = false
    }

    private let state = Locked(State())
    private let limit: Int
    /// Pauses (`true`) or resumes (`false`) the transfer; called outside the lock, a pause as
    /// often as a chunk finds the buffer full.
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

    /// Adds a chunk that arrived; ignored once the stream ended. Called by one producer at a time.
    func push(_ chunk: Data) {
        guard !chunk.isEmpty else { return }
        var sinks = false
        let (waiter, pauses) = state.withLock {
            state -> (CheckedContinuation<Result<Data?, ErrandError>, Never>?, Bool) in
            guard state.end == nil else { return (nil, false) }
            state.hasReceivedBody = true
            if state.sink != nil {
                state.chunks.append(chunk)
                sinks = Self.becomesSinking(&state)
                return (nil, false)
            }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, false)
            }
            state.chunks.append(chunk)
            state.bufferedBytes += chunk.count
            state.peakBufferedBytes = max(state.peakBufferedBytes, state.bufferedBytes)
            guard state.bufferedBytes > limit else { return (nil, false) }
            state.isPaused = true
            return (nil, true)
        }
        if sinks { deliverToSink() }
        waiter?.resume(returning: .success(chunk))
        guard pauses else { return }
        flow(true)
        // The consumer may have caught up, and resumed, before this pause went out.
        if !state[\.isPaused] { flow(false) }
    }

    /// Claims the buffer for `sink`, which from now on takes every chunk — those waiting first —
    /// on the thread that pushes it, then the end; `false` when the buffer was already claimed.
    /// The sink pauses the transfer with ``pauseTransfer(_:)``.
    func divert(to sink: @escaping Sink) -> Bool {
        let taken = state.withLock { state -> (sinks: Bool, resumes: Bool)? in
            guard !state.isClaimed else { return nil }
            state.isClaimed = true
            state.sink = sink
            state.bufferedBytes = 0
            // A pause for the chunks that waited is the sink's to lift or keep from now on.
            defer { state.isPaused = false }
            let sinks = state.head < state.chunks.count || state.end != nil ? Self.becomesSinking(&state) : false
            return (sinks, state.isPaused)
        }
        guard let taken else { return false }
        if taken.resumes { flow(false) }
        if taken.sinks { deliverToSink() }
        return true
    }

    /// Pauses (`true`) or resumes the transfer, for a sink that fell behind or caught up.
    func pauseTransfer(_ pause: Bool) {
        flow(pause)
    }

    /// Whether the caller is to hand the queued chunks to the sink: no other thread is.
    private static func becomesSinking(_ state: inout State) -> Bool {
        defer { state.isSinking = true }
        return !state.isSinking
    }

    /// Hands the sink what is queued, in order, until nothing is; then the end, once.
    private func deliverToSink() {
        while true {
            let taken = state.withLock { state -> (Sink, [Data], ErrandError??)? in
                guard let sink = state.sink else {
                    state.isSinking = false
                    return nil
                }
                let chunks = Array(state.chunks[state.head...])
                state.chunks.removeAll()
                state.head = 0
                guard chunks.isEmpty else { return (sink, chunks, nil) }
                guard let end = state.end else {
                    state.isSinking = false
                    return nil
                }
                // Nothing follows the end: let go of the sink and what it holds.
                state.sink = nil
                state.isSinking = false
                state.isEndTaken = true
                return (sink, [], end)
            }
            guard let (sink, chunks, end) = taken else { return }
            for chunk in chunks { sink(.chunk(chunk)) }
            if let end { return sink(.end(end)) }
        }
    }

    /// Ends the stream: after the chunks still waiting, the consumer gets `nil`, or `error`.
    /// `trailers`, what the body ended with, are readable once the consumer got that end.
    func finish(_ error: ErrandError?, trailers: [String: String] = [:]) {
        end(error, droppingChunks: false, trailers: trailers)
    }

    /// The trailer fields the body ended with; empty until the consumer was handed the end, and
    /// when none came.
    var trailers: [String: String] { state.withLock { $0.isEndTaken ? $0.trailers : [:] } }

    /// Ends the stream at once with `error`, dropping what waits: the consumer stopped.
    func cancel(with error: ErrandError) {
        end(error, droppingChunks: true)
    }

    /// The next chunk, `nil` at the end, or why the stream failed; waits while none is there.
    func next() async -> Result<Data?, ErrandError> {
        await withCheckedContinuation { continuation in
            let (ready, resumes) = state.withLock { state -> (Result<Data?, ErrandError>?, Bool) in
                if state.head < state.chunks.count {
                    return (.success(Self.take(&state)), Self.liftsPause(&state, limit: limit))
                }
                if let end = state.end {
                    state.isEndTaken = true
                    return (end.map { .failure($0) } ?? .success(nil), false)
                }
                state.waiter = continuation
                return (nil, false)
            }
            if let ready { continuation.resume(returning: ready) }
            if resumes { flow(false) }
        }
    }

    private func end(_ error: ErrandError?, droppingChunks: Bool, trailers: [String: String] = [:]) {
        var sinks = false
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
            state.trailers = trailers
            if state.sink != nil { sinks = Self.becomesSinking(&state) }
            defer { state.waiter = nil }
            // A waiting consumer has taken every chunk: it gets the end now.
            if state.waiter != nil { state.isEndTaken = true }
            return state.waiter
        }
        if sinks { deliverToSink() }
        waiter?.resume(returning: error.map { .failure($0) } ?? .success(nil))
    }

    /// Takes the chunk at `head`.
    private static func take(_ state: inout State) -> Data {
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
        return chunk
    }

    /// Whether the consumer just took the buffer below half the limit while paused: resume then.
    private static func liftsPause(_ state: inout State, limit: Int) -> Bool {
        guard state.isPaused, state.bufferedBytes <= limit / 2 else { return false }
        state.isPaused = false
        return true
    }
}
