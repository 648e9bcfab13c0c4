import Dispatch

/// One monitor and the serial queue its events are delivered on, in the order they were posted.
///
/// Events wait in a backlog that one drain on the queue empties in batches. The drain starts
/// ``gatheringDelay`` after the first event of a batch: waking a thread costs more CPU than a
/// request's own work, so a busy client's monitor wakes once per many requests, not once per
/// event, and a monitor sees each event at most a millisecond or so late. Posting never waits: a
/// monitor whose backlog holds ``backlogLimit`` events misses the events past that, each counted
/// in the shared `dropped` counter, so a slow monitor costs memory only up to a bound and never
/// a request's time.
final class EventMonitorChannel: Sendable {
    /// A monitor's call, with the task and values it reports.
    typealias Event = @Sendable (any EventMonitor) -> Void

    private struct Backlog {
        var events: [Event] = []
        /// Whether a drain is queued or running: the next post need not queue another.
        var isDraining = false
    }

    let monitor: any EventMonitor
    private let queue = DispatchQueue(label: "Errand.EventMonitor", qos: .utility)
    private let backlog = Locked(Backlog())
    private let backlogLimit: Int
    private let dropped: Locked<Int>

    /// Events a monitor may fall behind before more are dropped. Default 10,000.
    static let defaultBacklogLimit = 10_000

    /// How long a batch gathers events before its drain starts.
    static let gatheringDelay = DispatchTimeInterval.milliseconds(1)

    init(_ monitor: any EventMonitor, backlogLimit: Int = defaultBacklogLimit, dropped: Locked<Int>) {
        self.monitor = monitor
        self.backlogLimit = backlogLimit
        self.dropped = dropped
    }

    /// Queues `event` for the monitor, or counts it as dropped when the monitor is too far behind.
    func post(_ event: @escaping Event) {
        let startsDrain = backlog.withLock { backlog -> Bool? in
            guard backlog.events.count < backlogLimit else { return nil }
            backlog.events.append(event)
            defer { backlog.isDraining = true }
            return !backlog.isDraining
        }
        switch startsDrain {
        case nil: dropped.withLock { $0 += 1 }
        case true?: queue.asyncAfter(deadline: .now() + Self.gatheringDelay) { [self] in drain() }
        case false?: break
        }
    }

    /// On the queue: delivers the backlog, batch by batch, until it is empty.
    private func drain() {
        while true {
            let batch = backlog.withLock { backlog -> [Event] in
                guard !backlog.events.isEmpty else {
                    backlog.isDraining = false
                    return []
                }
                defer { backlog.events.removeAll(keepingCapacity: true) }
                return backlog.events
            }
            guard !batch.isEmpty else { return }
            for event in batch { event(monitor) }
        }
    }
}
