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
///
/// A ``DrainableMonitor`` (``HARRecorder``) may also take the events already posted to it on the
/// thread that asks it something (``deliverPosted()``): its batches are then delivered under
/// `delivery`, so that the queue and that thread never deliver its events out of order.
final class EventMonitorChannel: Sendable {
    /// A monitor's call, with the task and values it reports.
    typealias Event = @Sendable (any EventMonitor) -> Void

    private struct Backlog {
        var events: [Event] = []
        /// Whether a drain is queued or running: the next post need not queue another.
        var isDraining = false
        /// Events delivered, for the next post to release (see ``post(_:)``).
        var delivered: [Event] = []
        /// Whether the queue will release `delivered` itself, should no post come to.
        var isReleaseScheduled = false
    }

    let monitor: any EventMonitor
    /// Whether callers wait for the monitor's `didFinish` (``EventMonitor/finishesBeforeCaller``), read once.
    let finishesBeforeCaller: Bool
    /// The monitor, when it drains its channels; `nil` for most, which pay nothing for it.
    let drainable: (any DrainableMonitor)?
    private let queue = DispatchQueue(label: "Errand.EventMonitor", qos: .utility)
    /// Held while a drainable monitor's batch is delivered, by the queue or ``deliverPosted()``;
    /// it counts the batches. Not a `Locked<Void>`: an empty value shares its address with the
    /// mutex, which the thread sanitizer then reports as a race.
    private let delivery = Locked(0)
    /// Set on the queue, to tell a call made from a delivery on it.
    private static let onQueue = DispatchSpecificKey<ObjectIdentifier>()
    private let backlog = Locked(Backlog())
    private let backlogLimit: Int
    private let gatheringDelay: DispatchTimeInterval
    private let dropped: Locked<Int>

    /// Events a monitor may fall behind before more are dropped. Default 10,000.
    static let defaultBacklogLimit = 10_000

    /// How long a batch gathers events before its drain starts.
    static let gatheringDelay = DispatchTimeInterval.milliseconds(1)

    /// How long delivered events wait for a post to release them before the queue does.
    static let idleReleaseDelay = DispatchTimeInterval.milliseconds(100)

    /// Delivered events a post releases at most: posts come several per request, so a busy
    /// client still releases everything, and none pays for a long batch at once.
    static let releasedPerPostLimit = 64

    init(
        _ monitor: any EventMonitor, backlogLimit: Int = defaultBacklogLimit,
        gatheringDelay: DispatchTimeInterval = EventMonitorChannel.gatheringDelay, dropped: Locked<Int>
    ) {
        self.monitor = monitor
        self.backlogLimit = backlogLimit
        self.gatheringDelay = gatheringDelay
        self.dropped = dropped
        finishesBeforeCaller = monitor.finishesBeforeCaller
        drainable = monitor as? any DrainableMonitor
        queue.setSpecific(key: Self.onQueue, value: ObjectIdentifier(self))
        drainable?.attach(self)
    }

    /// Queues `event` for the monitor, or counts it as dropped when the monitor is too far behind;
    /// `false` when it was dropped. A `prompt` event starts a drain without the gathering delay:
    /// a caller waits for it.
    ///
    /// It also releases the events delivered since the last post, here rather than on the
    /// monitor's queue: they hold what the posting threads allocated (the events, often the last
    /// reference to a finished task), and memory freed on another thread than the one that
    /// allocated it contends for that thread's malloc arena — measured, it cost the request
    /// more than all the rest of reporting.
    @discardableResult
    func post(_ event: @escaping Event, prompt: Bool = false) -> Bool {
        var released: [Event] = []
        let startsDrain = backlog.withLock { backlog -> Bool? in
            // A few at a time: the poster may be a caller's main thread.
            if backlog.delivered.count <= Self.releasedPerPostLimit {
                swap(&released, &backlog.delivered)
            } else {
                released = Array(backlog.delivered.suffix(Self.releasedPerPostLimit))
                backlog.delivered.removeLast(Self.releasedPerPostLimit)
            }
            guard backlog.events.count < backlogLimit else { return nil }
            backlog.events.append(event)
            defer { backlog.isDraining = true }
            return !backlog.isDraining
        }
        switch startsDrain {
        case nil: dropped.withLock { $0 += 1 }
        case true? where prompt: queue.async { [self] in drain() }
        case true?: queue.asyncAfter(deadline: .now() + gatheringDelay) { [self] in drain() }
        case false?: break
        }
        return startsDrain != nil
    }

    /// On the queue: delivers the backlog, batch by batch, until it is empty.
    private func drain() {
        while deliverBatch(endingDrain: true) {}
        scheduleRelease()
    }

    /// Delivers to a ``DrainableMonitor`` every event posted to it so far, on the calling thread,
    /// before returning: what it answers then includes them. Events the queue is delivering
    /// meanwhile are waited for, which takes no longer than the monitor's own work on them.
    /// Does nothing for other monitors, and when called from a delivery on this channel's queue,
    /// where waiting would never end: that delivery comes before the events still waiting.
    func deliverPosted() {
        guard drainable != nil, DispatchQueue.getSpecific(key: Self.onQueue) != ObjectIdentifier(self) else {
            return
        }
        _ = deliverBatch(endingDrain: false)
    }

    /// Takes the backlog and delivers it; `false` when it was empty. Only the queue's drain ends
    /// the drain when it finds nothing: another caller leaves it to the drain already scheduled.
    private func deliverBatch(endingDrain: Bool) -> Bool {
        guard drainable != nil else { return deliver(take(endingDrain: endingDrain)) }
        return delivery.withLock { batches in
            batches &+= 1
            return deliver(take(endingDrain: endingDrain))
        }
    }

    private func take(endingDrain: Bool) -> [Event] {
        backlog.withLock { backlog -> [Event] in
            guard !backlog.events.isEmpty else {
                if endingDrain { backlog.isDraining = false }
                return []
            }
            defer { backlog.events = [] }
            return backlog.events
        }
    }

    private func deliver(_ batch: [Event]) -> Bool {
        guard !batch.isEmpty else { return false }
        for event in batch { event(monitor) }
        backlog.withLock { backlog in
            if backlog.delivered.isEmpty { backlog.delivered = batch } else { backlog.delivered += batch }
        }
        return true
    }

    /// Releases what was delivered after a while on the queue, should no post come to release
    /// it: an idle client must not keep its last tasks alive.
    private func scheduleRelease() {
        let schedules = backlog.withLock { backlog -> Bool in
            guard !backlog.delivered.isEmpty, !backlog.isReleaseScheduled else { return false }
            backlog.isReleaseScheduled = true
            return true
        }
        guard schedules else { return }
        queue.asyncAfter(deadline: .now() + Self.idleReleaseDelay) { [self] in
            let released = backlog.withLock { backlog -> [Event] in
                backlog.isReleaseScheduled = false
                defer { backlog.delivered = [] }
                return backlog.delivered
            }
            _ = released
        }
    }
}
