import Dispatch

/// Passes one transfer's progress to closures, each on its own queue, and to any number of
/// `AsyncStream`s.
///
/// Chunks arrive far faster than a screen redraws, so reports are coalesced: at most one call
/// per closure waits on its queue at a time, and it delivers the newest value. Streams keep
/// only the newest value too. Either way memory stays bounded and values never go backwards.
final class ProgressReporter: Sendable {
    /// A closure and the queue it runs on.
    struct Sink: Sendable {
        let closure: @Sendable (TransferProgress) -> Void
        let queue: DispatchQueue
    }

    private struct State {
        var latest: TransferProgress?
        var queuedCalls: [Bool]
        var streams: [Int: AsyncStream<TransferProgress>.Continuation] = [:]
        var nextStreamID = 0
        var isFinished = false
    }

    private let state: Locked<State>
    private let sinks: [Sink]

    /// `latest` is a value reported before anything listened, for a stream to start with.
    init(sinks: [Sink], latest: TransferProgress? = nil) {
        self.sinks = sinks
        state = Locked(State(latest: latest, queuedCalls: Array(repeating: false, count: sinks.count)))
    }

    func report(_ progress: TransferProgress) {
        let (streams, callsToQueue) = state.withLock { state in
            guard !state.isFinished, progress != state.latest else {
                return ([AsyncStream<TransferProgress>.Continuation](), [Int]())
            }
            state.latest = progress
            let idle = state.queuedCalls.indices.filter { !state.queuedCalls[$0] }
            idle.forEach { state.queuedCalls[$0] = true }
            return (Array(state.streams.values), idle)
        }
        streams.forEach { $0.yield(progress) }
        for index in callsToQueue {
            let sink = sinks[index]
            sink.queue.async { [state] in
                let newest = state.withLock { state in
                    state.queuedCalls[index] = false
                    return state.latest
                }
                if let newest { sink.closure(newest) }
            }
        }
    }

    /// A stream of this transfer's progress that starts with the newest value, if any, and ends
    /// when the request does.
    func stream() -> AsyncStream<TransferProgress> {
        let (stream, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (id, latest, isFinished) = state.withLock { state in
            let id = state.nextStreamID
            state.nextStreamID += 1
            if !state.isFinished { state.streams[id] = continuation }
            return (id, state.latest, state.isFinished)
        }
        if let latest { continuation.yield(latest) }
        if isFinished {
            continuation.finish()
        } else {
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.streams.removeValue(forKey: id) }
            }
        }
        return stream
    }

    /// Ends every stream; later reports are dropped.
    func finish() {
        let streams = state.withLock { state in
            state.isFinished = true
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        streams.forEach { $0.finish() }
    }
}
