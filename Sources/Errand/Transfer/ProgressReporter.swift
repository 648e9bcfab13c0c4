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

    private let values: NewestValueStreams<TransferProgress>
    /// Per sink, whether a call is queued on its queue already.
    private let queuedCalls: Locked<[Bool]>
    private let sinks: [Sink]

    /// `latest` is a value reported before anything listened, for a stream to start with.
    init(sinks: [Sink], latest: TransferProgress? = nil) {
        self.sinks = sinks
        values = NewestValueStreams(newest: latest)
        queuedCalls = Locked(Array(repeating: false, count: sinks.count))
    }

    func report(_ progress: TransferProgress) {
        guard values.publish(progress) else { return }
        let callsToQueue = queuedCalls.withLock { queued in
            let idle = queued.indices.filter { !queued[$0] }
            idle.forEach { queued[$0] = true }
            return idle
        }
        for index in callsToQueue {
            let sink = sinks[index]
            sink.queue.async { [queuedCalls, values] in
                queuedCalls.withLock { $0[index] = false }
                if let newest = values.newest { sink.closure(newest) }
            }
        }
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
