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

    /// What a sink's calls need to know: whether one is queued, and the value it delivered last.
    private struct SinkState {
        var isQueued = false
        var delivered: TransferProgress?
    }

    private let values: NewestValueStreams<TransferProgress>
    private let sinkStates: Locked<[SinkState]>
    private let sinks: [Sink]

    /// `latest` is a value reported before anything listened, for a stream to start with.
    init(sinks: [Sink], latest: TransferProgress? = nil) {
        self.sinks = sinks
        values = NewestValueStreams(newest: latest)
        sinkStates = Locked(Array(repeating: SinkState(), count: sinks.count))
    }

    func report(_ progress: TransferProgress) {
        guard values.publish(progress) else { return }
        let callsToQueue = sinkStates.withLock { states in
            let idle = states.indices.filter { !states[$0].isQueued }
            idle.forEach { states[$0].isQueued = true }
            return idle
        }
        for index in callsToQueue {
            sinks[index].queue.async { [self] in call(index) }
        }
    }

    /// Calls sink `index` with the newest value, unless it had it already. The call is marked
    /// unqueued before the value is read, so a value reported meanwhile queues another call rather
    /// than being missed; that call then finds it delivered and does nothing.
    private func call(_ index: Int) {
        sinkStates.withLock { $0[index].isQueued = false }
        guard let newest = values.newest else { return }
        let isNew = sinkStates.withLock { states in
            guard states[index].delivered != newest else { return false }
            states[index].delivered = newest
            return true
        }
        if isNew { sinks[index].closure(newest) }
    }

    /// A stream of this transfer's progress that starts with the newest value, if any, and ends
    /// when the request does.
    func stream() -> AsyncStream<TransferProgress> {
        values.stream()
    }

    /// Ends every stream; later reports are dropped.
    func finish() {
        values.finish()
    }
}
