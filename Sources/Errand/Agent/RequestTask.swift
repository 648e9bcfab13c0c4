import Dispatch
import Foundation

/// One execution of a request: its state while it runs, and its response or error after.
///
/// A task calls back exactly once — success or failure, `.cancelled` included — and then drops
/// its callbacks, so closures capturing a view controller do not keep it alive.
public final class RequestTask: Sendable {
    /// The request this task executes.
    public let request: any BaseRequest

    /// Its whole state, under one lock; the attempt's part is in RequestTask+Attempt.swift.
    let state: Locked<State>
    private let cancellationHandler: @Sendable (RequestTask) -> Void
    let progress: TaskProgress
    /// The event monitors the task reports to, as the configuration had them when it was made.
    let monitors: EventMonitors
    /// The `async` caller that runs this task's response work itself; `nil` for other callers.
    let awaitingCaller: AwaitingCaller?
    /// The configuration of the agent that runs the task: whose API its credentials belong to.
    let config: NetworkConfig

    init(
        request: any BaseRequest, completion: TaskCompletion, config: NetworkConfig,
        monitors: EventMonitors = EventMonitors([]), onCancel: @escaping @Sendable (RequestTask) -> Void
    ) {
        self.request = request
        self.config = config
        self.monitors = monitors
        awaitingCaller = if case .awaiting(let caller) = completion { caller } else { nil }
        self.state = Locked(
            State(completion: completion, accessories: InterceptorChain.accessories(of: request, config: config)))
        self.cancellationHandler = onCancel
        self.progress = TaskProgress(request: request, queue: config.callbackQueue)
        if case .delegate(let delegate) = completion { progress.notify(delegate, about: self) }
    }

    // MARK: Public state

    /// A number of the caller's choosing, to tell tasks apart in shared callbacks. Default `0`.
    public var tag: Int {
        get { state[\.tag] }
        set { state[\.tag] = newValue }
    }

    /// Values of the caller's choosing carried with the task. Default empty.
    public var userInfo: [String: any Sendable] {
        get { state[\.userInfo] }
        set { state[\.userInfo] = newValue }
    }

    /// Whether ``cancel()`` was called before the task finished.
    public var isCancelled: Bool { state[\.isCancelled] }

    /// Whether the task has started and not yet finished; a task waiting in the agent's queue,
    /// or between two attempts, counts.
    public var isExecuting: Bool { state.withLock { $0.phase == .started } }

    /// How many times the request was sent: `1` for the first attempt, more after retries and
    /// restarted downloads; `0` before it is sent and for a response served from the cache.
    public var attemptCount: Int { state[\.attempt] }

    /// The request as last sent, after interceptors adapted it; `nil` before the first attempt.
    public var sentRequest: TransportRequest? { state[\.sentRequest] }

    /// The `Cookie` value ``sentRequest``'s jar gave as it went out, when the attempt recorded it.
    var sentJarCookieHeader: String? { state[\.sentJarCookieHeader] }

    /// The response, once one arrived — also when validation then failed it, so the body of a
    /// 404 can be read. `nil` when the request failed before the server answered. Between
    /// attempts, the last attempt's response, as interceptors deciding on a retry see it.
    public var response: Response? { state[\.response] }

    /// The interim (1xx) heads that came before the response of the current or last attempt, in
    /// order — `103 Early Hints` with its `Link` fields, `104 Upload Resumption Supported` — each
    /// with an empty `data`. Empty when none came, and for a response from the cache. Monitors
    /// hear of each as it arrives (``EventMonitor/request(_:didReceiveInterim:)``).
    public var interimResponses: [Response] { state[\.interimResponses] }

    /// Timings and HTTP version of the last attempt, from a transport that reports them
    /// (``CurlTransport``); `nil` otherwise, and for a response from the cache.
    public var metrics: TransportMetrics? { state[\.metrics] }

    /// Why the task failed; `nil` while it runs and after success.
    public var error: ErrandError? { state[\.error] }

    /// The response once the task finishes, or the error it failed with — for a task started
    /// with closures or a delegate whose outcome an `async` caller also wants.
    ///
    /// ```swift
    /// let task = DownloadApi().start()
    /// Task { for await progress in task.downloadProgress { bar.show(progress) } }
    /// let file = try await task.value.fileURL
    /// ```
    /// Cancelling the awaiting Swift task does not cancel the request; call ``cancel()``.
    public var value: Response {
        get async throws(ErrandError) {
            let outcome = await withCheckedContinuation { continuation in
                let finished = state.withLock { state -> Result<Response, ErrandError>? in
                    guard state.phase == .finished else {
                        state.waiters.append(continuation)
                        return nil
                    }
                    return state.outcome
                }
                if let finished { continuation.resume(returning: finished) }
            }
            return try outcome.get()
        }
    }

    /// The response body's progress, for every request: bytes received and the total when known
    /// (the last value's equal the body's size); for a ``BaseRequest/resumableDownloadPath``,
    /// bytes on disk, a resumed download starting from what it had. It starts with the newest
    /// value, keeps only the newest when the reader falls behind, and ends with the task.
    public var downloadProgress: AsyncStream<TransferProgress> { progress.stream(.download) }

    /// The upload's progress: bytes of the body sent and its total when known. It starts with the
    /// newest value, keeps only the newest when the reader falls behind, and ends with the task.
    public var uploadProgress: AsyncStream<TransferProgress> { progress.stream(.upload) }

    /// Adds an observer of this task's stop: it is told around the callback. The task has already
    /// started, so only the accessories it was made with see the start.
    public func addAccessory(_ accessory: any RequestAccessory) {
        state.withLock { $0.accessories.append(accessory) }
    }

    /// Stops the task. Its failure callback runs with ``ErrandError/cancelled`` unless it had already finished;
    /// calling `cancel()` again does nothing. A wait between attempts ends at once; a download on the wire ends
    /// once the transport has stopped and its file is let go, so that the partial it keeps holds every byte
    /// received and a restart finds the file free. An open ``WebSocket``'s task closes the socket with 1001
    /// (going away) and finishes after the closing handshake.
    public func cancel() {
        let closing = stream?.closing
        let cancelled = state.withLock { state -> (stops: [@Sendable () -> Void], finishesNow: Bool)? in
            guard !state.isCancelled, state.phase != .finished else { return nil }
            state.isCancelled = true
            let transportStop = closing ?? state.transportTask.map { task -> @Sendable () -> Void in { task.cancel() } }
            let stops = [transportStop, state.pendingWork].compactMap { $0 }
            state.pendingWork = nil
            let downloadIsBusy = state.download != nil && (state.attemptInFlight || state.isConcluding)
            return (stops, !downloadIsBusy && closing == nil)
        }
        guard let cancelled else { return }
        cancelled.stops.forEach { $0() }
        if cancelled.finishesNow { cancellationHandler(self) }
    }

    // MARK: Driven by the agent

    var accessories: [any RequestAccessory] { state[\.accessories] }
    /// The response or the error, once finished; `.cancelled` before.
    var outcome: Result<Response, ErrandError> { state.withLock { $0.outcome } }

    /// The request as sent, else as built: what descriptions and the debug log show.
    var transportRequest: TransportRequest? { state.withLock { $0.sentRequest ?? $0.builtRequest } }
    var startTime: DispatchTime { state[\.startTime] }
    /// Where a download's body goes; set before the first attempt.
    var download: DownloadReceiver? {
        get { state[\.download] }
        set { state[\.download] = newValue }
    }

    /// What a resumable upload's attempts ask; set before the first attempt.
    var upload: ResumableUpload? {
        get { state[\.upload] }
        set { state[\.upload] = newValue }
    }

    /// Where a streamed request's body goes; set before the first attempt.
    var stream: StreamReceiver? {
        get { state[\.stream] }
        set { state[\.stream] = newValue }
    }

    /// Marks the task as started; `false` when it was cancelled first.
    func start() -> Bool {
        state.withLock { state in
            guard state.phase == .created, !state.isCancelled else { return false }
            state.phase = .started
            state.startTime = .now()
            return true
        }
    }

    /// Records the request as built, before any interceptor.
    func built(_ request: TransportRequest) {
        state.withLock { $0.builtRequest = request }
    }

    /// The request as built, before any interceptor: where the request itself goes.
    var builtRequest: TransportRequest? { state[\.builtRequest] }

    /// Notes the debug log adds to the task's line, in the order first added.
    var debugNotes: [String] { state[\.debugNotes] }

    /// Adds `note` to the task's debug-log line, unless it is there already: a later attempt
    /// notes the same again.
    func addDebugNote(_ note: String) {
        state.withLock { state in
            if !state.debugNotes.contains(note) { state.debugNotes.append(note) }
        }
    }

    /// The folder the task's response is cached in, chosen when it started; `nil` when it does not cache.
    var cacheFolder: URL? {
        get { state[\.cacheFolder] }
        set { state[\.cacheFolder] = newValue }
    }

    /// Keeps `file` until the task finishes, then deletes it: an encoded upload body.
    /// - Returns: `false` when the task already finished; the caller deletes the file itself.
    func adoptTemporaryFile(_ file: URL) -> Bool {
        state.withLock { state in
            guard state.phase != .finished else { return false }
            state.bodyFiles.adopt(file)
            return true
        }
    }

    /// Starts what the task waits for between attempts — an adapt, a retry decision, a back-off —
    /// and keeps what `start` returns to stop it, for ``cancel()``; does nothing when the task was
    /// cancelled or finished. `start` runs under the task's lock: work that registers work of its
    /// own, as a retry decision registers its back-off, can then only do so after this call, and
    /// is never replaced by it.
    func wait(for start: () -> @Sendable () -> Void) {
        state.withLock { state in
            guard state.phase == .started, !state.isCancelled else { return }
            state.pendingWork = start()
        }
    }

    /// Records the outcome; `false` when the task had already finished, so that each task finishes once.
    func finish(response: Response?, error: ErrandError?) -> Bool {
        let finished = state.withLock {
            state -> (files: [URL], wasBuilt: Bool, built: BodyStream?, sent: BodyStream?)? in
            guard state.phase != .finished else { return nil }
            state.phase = .finished
            state.response = response
            state.error = error
            state.transportTask = nil
            state.pendingWork = nil
            return (
                state.bodyFiles.takeUnused(), state.builtRequest != nil, state.builtRequest?.bodyStream,
                state.sentRequest?.bodyStream
            )
        }
        guard let finished else { return false }
        TemporaryBodyFiles.remove(finished.files)
        // A body stream no transport took — the request failed before it was sent, was answered
        // from the cache, cancelled while queued, or refused — ends with the task, so that its
        // producer stops yielding into a stream nobody reads.
        if finished.wasBuilt {
            finished.built?.discard()
            finished.sent?.discard()
        } else if case .stream(let body)? = request.uploadBody {
            body.discard()
        }
        progress.finish()
        return true
    }

    /// Notes that the transport completed an attempt; a finished task's body files can go now.
    func transportCompleted() {
        let files = state.withLock { state in
            state.bodyFiles.transportCompleted()
            return state.phase == .finished ? state.bodyFiles.takeUnused() : []
        }
        TemporaryBodyFiles.remove(files)
    }

    /// Holds this task's callback until `group` is empty: cache-then-network's fresh response
    /// follows the cached one even on a concurrent callback queue.
    func deliver(after group: DispatchGroup) {
        state.withLock { $0.deliveryPredecessor = group }
    }

    /// Runs the accessories and the one callback where the ``TaskCompletion`` says, then drops the
    /// callbacks. `watch`, when the debug log is on, times callbacks that wait for the main queue.
    func deliver(on callbackQueue: DispatchQueue, watch: MainQueueWatch? = nil) {
        let (completion, outcome, predecessor, waiters) = state.withLock { state in
            defer {
                state.completion = nil
                state.waiters = []
            }
            return (state.completion, state.outcome, state.deliveryPredecessor, state.waiters)
        }
        waiters.forEach { $0.resume(returning: outcome) }
        guard let completion else { return }
        let accessories = self.accessories
        let run: @Sendable () -> Void = {
            accessories.forEach { $0.requestWillStop(self) }
            completion.call(self, with: outcome)
            accessories.forEach { $0.requestDidStop(self) }
        }
        if let awaitingCaller { return awaitingCaller.post(.run(run)) }
        guard let queue = completion.queue(callbackQueue: callbackQueue) else { return run() }
        let ticket = completion.runsOnMain(callbackQueue: callbackQueue) ? watch?.enqueued() : nil
        let timed: @Sendable () -> Void = {
            if let ticket { watch?.ran(ticket) }
            run()
        }
        if let predecessor {
            predecessor.notify(queue: queue, execute: timed)
        } else {
            queue.async(execute: timed)
        }
    }
}
