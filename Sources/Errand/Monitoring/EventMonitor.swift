/// Watches requests as they run, for logging, metrics, network inspectors and recordings
/// of traffic (``HARRecorder``): add one with ``NetworkConfig/addEventMonitor(_:)``.
///
/// For each task the methods are called in this order, each on the monitor's own serial queue —
/// never on the caller's thread or the callback queue, and never holding up the request:
///
/// 1. ``requestDidStart(_:)``, once;
/// 2. for each attempt: ``request(_:willSend:)`` (after interceptors adapted it), then
///    ``request(_:didReceiveInterim:)`` for each interim (1xx) head, then
///    ``request(_:didReceive:)`` once its head arrives, then ``request(_:didFailAttempt:willRetry:)``
///    if the attempt failed;
/// 3. or, for a response served from the cache, ``request(_:didServeFromCache:)`` (and no
///    `willSend`);
/// 4. ``request(_:didFinish:)``, once, last, with ``RequestTask/metrics`` filled in.
///
/// Network, retried, coalesced, cache-served, streamed, batched and chained requests are all
/// reported. A monitor that falls more than 10,000 events behind misses the events past that;
/// ``NetworkConfig/droppedMonitorEventCount`` counts them. Every method has an empty default.
///
/// A log whose last line must be out before a command-line tool exits returns `true` from
/// ``finishesBeforeCaller``: the caller then hears of each request only after that line.
public protocol EventMonitor: Sendable {
    /// The task started: from the agent's queue, the network or the cache.
    func requestDidStart(_ task: RequestTask)
    /// An attempt is about to go to the transport, as interceptors adapted it.
    func request(_ task: RequestTask, willSend request: TransportRequest)
    /// An interim (1xx) head of an attempt arrived — `103 Early Hints`, `104 Upload Resumption
    /// Supported` — status and header fields, `data` empty; the final head follows.
    func request(_ task: RequestTask, didReceiveInterim response: Response)
    /// An attempt's response head arrived: status and header fields, `data` empty.
    func request(_ task: RequestTask, didReceive response: Response)
    /// An attempt failed; `willRetry` says whether another attempt follows, and is `false` on the last.
    func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool)
    /// The task finished, as its callback or `await` is told; always the last event.
    func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>)
    /// The task was answered from the cache, followed by ``request(_:didFinish:)``.
    func request(_ task: RequestTask, didServeFromCache response: Response)
    /// Whether a task's caller — its callback, its `await`, its delegate — hears of the outcome
    /// only once this monitor's ``request(_:didFinish:)`` has returned. Default `false`: the
    /// monitor never holds a request up.
    ///
    /// `true` is for a log: a tool that exits as soon as its last request returns still has that
    /// request's line written, as with Errand's own ``NetworkConfig/debugLogEnabled``. The
    /// monitor's `didFinish` is then called without the batching delay, and every task waits for
    /// it, on the monitor's queue, never on a thread of the caller's: keep it short, and never
    /// let it wait for a request's caller. A monitor that has fallen 10,000 events behind is
    /// not waited for.
    var finishesBeforeCaller: Bool { get }
}

extension EventMonitor {
    /// Does nothing.
    public func requestDidStart(_ task: RequestTask) {}
    /// Does nothing.
    public func request(_ task: RequestTask, willSend request: TransportRequest) {}
    /// Does nothing.
    public func request(_ task: RequestTask, didReceiveInterim response: Response) {}
    /// Does nothing.
    public func request(_ task: RequestTask, didReceive response: Response) {}
    /// Does nothing.
    public func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool) {}
    /// Does nothing.
    public func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {}
    /// Does nothing.
    public func request(_ task: RequestTask, didServeFromCache response: Response) {}
    /// `false`: the caller does not wait for the monitor.
    public var finishesBeforeCaller: Bool { false }
}
