import Dispatch

/// Passes one transfer's progress to a closure on the callback queue and to any number of
/// `AsyncStream`s.
///
/// Chunks arrive far faster than a screen redraws, so reports are coalesced: at most one
/// closure call waits on the queue at a time, and it delivers the newest value. Streams keep
/// only the newest value too. Either way memory stays bounded and values never go backwards.
final class ProgressReporter: Sendable {
    private struct State {
        var latest: TransferProgress?
        var closureCallQueued = false
        var streams: [Int: AsyncStream<TransferProgress>.Continuation] = [:]
        var nextStreamID = 0
        var isFinished = false
    }

    private let state = Locked(State())
    private let closure: (@Sendable (TransferProgress) -> Void)?
    private let queue: DispatchQueue

    init(closure: (@Sendable (TransferProgress) -> Void)?, queue: DispatchQueue) {
        self.closure = closure
        self.queue = queue
    }

    func report(_ progress: TransferProgress) {
        let (streams, queueClosureCall) = state.withLock { state in
            guard !state.isFinished, progress != state.latest else {
                return ([AsyncStream<TransferProgress>.Continuation](), false)
            }
            state.latest = progress
            let queueCall = closure != nil && !state.closureCallQueued
            if queueCall { state.closureCallQueued = true }
            return (Array(state.streams.values), queueCall)
        }
        streams.forEach { $0.yield(progress) }
        guard queueClosureCall, let closure else { return }
        queue.async { [state] in
            let newest = state.withLock { state in
                state.closureCallQueued = false
                return state.latest
            }
            if let newest { closure(newest) }
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
