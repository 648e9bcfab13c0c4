import Foundation

/// A monitor that is asked about what it heard — a recording asked for its archive — and must
/// answer with every event already posted to it, not only those its queue has delivered so far.
///
/// Each ``EventMonitorChannel`` delivering to one attaches itself when it is made; the monitor
/// keeps its channels weakly and, when asked, has each deliver what waits in its backlog
/// (``EventMonitorChannel/deliverPosted()``). Such a monitor's events must do no I/O and never
/// wait: a channel of one delivers under a lock, so that a drain on another thread keeps the order.
protocol DrainableMonitor: EventMonitor, AnyObject {
    /// Notes a channel that delivers to this monitor.
    func attach(_ channel: EventMonitorChannel)

    /// The `willSend` event to post for `request`: what would be gone by the time the queue
    /// delivers it (a request body file) is read now, on the posting thread, and the time taken.
    func willSendEvent(_ task: RequestTask, _ request: TransportRequest) -> EventMonitorChannel.Event

    /// The `didReceive` event to post, the time taken now: it may be delivered much later.
    func didReceiveEvent(_ task: RequestTask, _ response: Response) -> EventMonitorChannel.Event

    /// The `didFinish` event to post, the time taken now: it may be delivered much later.
    func didFinishEvent(_ task: RequestTask, _ result: Result<Response, ErrandError>) -> EventMonitorChannel.Event

    /// The event to post for a WebSocket message the task's socket sent (`isSent`) or received,
    /// the time taken now. Only drainable monitors hear of messages: ``EventMonitor`` has no such event.
    func webSocketMessageEvent(_ task: RequestTask, _ message: WebSocketMessage, isSent: Bool)
        -> EventMonitorChannel.Event

    /// The event to post for a chunk of a streamed response body, `offset` bytes into it: the
    /// chunk goes to the stream's reader, so the response at `didFinish` does not hold it.
    func streamedBodyEvent(_ task: RequestTask, _ chunk: Data, at offset: Int) -> EventMonitorChannel.Event
}

/// A channel held without keeping it alive: a channel holds its monitor, and a monitor must not
/// hold its channels in return.
struct WeakChannel: Sendable {
    weak var channel: EventMonitorChannel?
}

extension DrainableMonitor {
    /// Nothing: a monitor that records no messages need not hear of them.
    func webSocketMessageEvent(_ task: RequestTask, _ message: WebSocketMessage, isSent: Bool)
        -> EventMonitorChannel.Event
    {
        { _ in }
    }

    /// Nothing: a monitor that records no bodies need not hear of a stream's.
    func streamedBodyEvent(_ task: RequestTask, _ chunk: Data, at offset: Int) -> EventMonitorChannel.Event {
        { _ in }
    }
}
