import Dispatch

/// One monitor and the serial queue its events are delivered on, in the order they were posted.
///
/// Posting never waits: a monitor more than ``backlogLimit`` events behind misses the events past
/// that, each counted in the shared `dropped` counter, so a slow monitor can cost memory only up
/// to a bound and a request never waits for it.
final class EventMonitorChannel: Sendable {
    let monitor: any EventMonitor
    private let queue = DispatchQueue(label: "Errand.EventMonitor", qos: .utility)
    private let backlog = Locked(0)
    private let backlogLimit: Int
    private let dropped: Locked<Int>

    /// Events a monitor may fall behind before more are dropped. Default 10,000.
    static let defaultBacklogLimit = 10_000

    init(_ monitor: any EventMonitor, backlogLimit: Int = defaultBacklogLimit, dropped: Locked<Int>) {
        self.monitor = monitor
        self.backlogLimit = backlogLimit
        self.dropped = dropped
    }

    /// Queues `event` for the monitor, or counts it as dropped when the monitor is too far behind.
    func post(_ event: @escaping @Sendable (any EventMonitor) -> Void) {
        let accepted = backlog.withLock { count in
            guard count < backlogLimit else { return false }
            count += 1
            return true
        }
        guard accepted else { return dropped.withLock { $0 += 1 } }
        queue.async { [monitor, backlog] in
            event(monitor)
            backlog.withLock { $0 -= 1 }
        }
    }
}
