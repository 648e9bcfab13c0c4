/// Streams of a value that only moves forward, such as a transfer's or a batch's progress: each
/// stream starts with the newest value, keeps only the newest when its reader falls behind, and
/// ends with ``finish()``.
///
/// Values are handed to the streams under the lock that orders them, a new stream's first value
/// included: handed over after it, a value could land behind a newer one, and a reader whose
/// buffer keeps only the newest would end on the older.
final class NewestValueStreams<Value: Sendable & Equatable>: Sendable {
    private struct State {
        var newest: Value?
        var streams: [Int: AsyncStream<Value>.Continuation] = [:]
        var nextID = 0
        var isFinished = false
    }

    private let state: Locked<State>

    /// `newest` is a value published before anything listened, for a stream to start with.
    init(newest: Value? = nil) {
        state = Locked(State(newest: newest))
    }

    /// The newest value published, if any.
    var newest: Value? { state[\.newest] }

    /// Keeps `value` as the newest and hands it to every stream; `false`, doing nothing, when it
    /// equals the newest or the streams have finished.
    @discardableResult
    func publish(_ value: Value) -> Bool {
        state.withLock { state in
            guard !state.isFinished, value != state.newest else { return false }
            state.newest = value
            state.streams.values.forEach { $0.yield(value) }
            return true
        }
    }

    /// A stream that starts with the newest value, if any, and ends with ``finish()``; one made
    /// after it holds the last value and ends at once.
    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state -> Int? in
            if let newest = state.newest { continuation.yield(newest) }
            guard !state.isFinished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.streams[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.streams.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every stream; later values are dropped.
    func finish() {
        let streams = state.withLock { state in
            state.isFinished = true
            defer { state.streams = [:] }
            return Array(state.streams.values)
        }
        streams.forEach { $0.finish() }
    }
}
