import Dispatch
import Foundation

/// One execution of a request: its state while it runs, and its response or error after.
///
/// A task calls back exactly once — success or failure, `.cancelled` included — and then drops
/// its callbacks, so closures capturing a view controller do not keep it alive.
public final class RequestTask: Sendable {
    /// The request this task executes.
    public let request: any BaseRequest

    private let state: Locked<State>
    private let cancellationHandler: @Sendable (RequestTask) -> Void
    let uploadReporter: ProgressReporter
    let downloadReporter: ProgressReporter

    init(
        request: any BaseRequest, completion: Completion, callbackQueue: DispatchQueue,
        onCancel: @escaping @Sendable (RequestTask) -> Void
    ) {
        self.request = request
        self.state = Locked(State(completion: completion, accessories: request.requestAccessories))
        self.cancellationHandler = onCancel
        self.uploadReporter = ProgressReporter(closure: request.uploadProgress, queue: callbackQueue)
        self.downloadReporter = ProgressReporter(closure: request.resumableDownloadProgress, queue: callbackQueue)
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

    /// Whether the task has started and not yet finished; a task waiting in the agent's queue counts.
    public var isExecuting: Bool {
        state.withLock {
            switch $0.phase {
            case .queued, .running: true
            case .created, .finished: false
            }
        }
    }

    /// The response, once one arrived — also when validation then failed it, so the body of a
    /// 404 can be read. `nil` when the request failed before the server answered.
    public var response: Response? { state[\.response] }

    /// Why the task failed; `nil` while it runs and after success.
    public var error: ErrandError? { state[\.error] }

    /// The response status code; `0` until a response arrives.
    public var responseStatusCode: Int { response?.statusCode ?? 0 }

    /// The response header fields; empty until a response arrives.
    public var responseHeaders: [String: String] { response?.headers ?? [:] }

    /// The response body; `nil` until a response arrives.
    public var responseData: Data? { response?.data }

    /// The response body as text; see ``Response/string``.
    public var responseString: String? { response?.string }

    /// The response body parsed as JSON; see ``Response/jsonObject``.
    public var responseJSONObject: Any? { response?.jsonObject }

    /// Whether the response was served from the cache.
    public var isDataFromCache: Bool { response?.isDataFromCache ?? false }

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
                    guard state.phase.isFinished else {
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

    /// The download's progress, for a request with ``BaseRequest/resumableDownloadPath``: bytes on
    /// disk (a resumed download starts from what it had) and the total when known. It starts with
    /// the newest value, keeps only the newest when the reader falls behind, and ends with the task.
    public var downloadProgress: AsyncStream<TransferProgress> { downloadReporter.stream() }

    /// The upload's progress: bytes of the body sent and its total when known. It starts with the
    /// newest value, keeps only the newest when the reader falls behind, and ends with the task.
    public var uploadProgress: AsyncStream<TransferProgress> { uploadReporter.stream() }

    /// Adds an observer of this task's stop: it is told around the callback. The task has
    /// already started, so only accessories named by ``BaseRequest/requestAccessories`` see the start.
    public func addAccessory(_ accessory: any RequestAccessory) {
        state.withLock { $0.accessories.append(accessory) }
    }

    /// Stops the task. Its failure callback runs with ``ErrandError/cancelled`` unless it had
    /// already finished; calling `cancel()` again does nothing.
    public func cancel() {
        let (didCancel, transportTask) = state.withLock { state -> (Bool, (any TransportTask)?) in
            guard !state.isCancelled, !state.phase.isFinished else { return (false, nil) }
            state.isCancelled = true
            if case .running(let task) = state.phase { return (true, task) }
            return (true, nil)
        }
        guard didCancel else { return }
        transportTask?.cancel()
        cancellationHandler(self)
    }

    // MARK: Driven by the agent

    /// How the task reports its outcome.
    enum Completion: Sendable {
        case closures(success: (@Sendable (RequestTask) -> Void)?, failure: (@Sendable (RequestTask) -> Void)?)
        case delegate(WeakDelegate)
        case continuation(@Sendable (Result<Response, ErrandError>) -> Void)
    }

    struct WeakDelegate: Sendable {
        weak var delegate: (any RequestDelegate)?
    }

    enum Phase {
        case created
        case queued
        case running(any TransportTask)
        case finished

        var isFinished: Bool {
            if case .finished = self { return true }
            return false
        }
    }

    private struct State {
        var completion: Completion?
        var accessories: [any RequestAccessory]
        var tag = 0
        var userInfo: [String: any Sendable] = [:]
        var phase = Phase.created
        var isCancelled = false
        var transportRequest: TransportRequest?
        var head: (statusCode: Int, headers: [String: String])?
        var body = Data()
        var response: Response?
        var error: ErrandError?
        var startTime = DispatchTime.now()
        var deliveryPredecessor: DispatchGroup?
        var waiters: [CheckedContinuation<Result<Response, ErrandError>, Never>] = []
        var download: DownloadReceiver?
        var temporaryFiles: [URL] = []

        var outcome: Result<Response, ErrandError> {
            if let error { return .failure(error) }
            if let response { return .success(response) }
            return .failure(.cancelled)
        }
    }

    var accessories: [any RequestAccessory] { state[\.accessories] }

    /// Whether the transport is sending the request now, as opposed to its waiting or being done.
    var isSending: Bool {
        state.withLock {
            if case .running = $0.phase { return true }
            return false
        }
    }
    var transportRequest: TransportRequest? { state[\.transportRequest] }
    /// Where a download's body goes; set before the task is queued.
    var download: DownloadReceiver? {
        get { state[\.download] }
        set { state[\.download] = newValue }
    }

    /// Keeps `file` until the task finishes, then deletes it: an encoded upload body.
    /// - Returns: `false` when the task already finished; the caller deletes the file itself.
    func adoptTemporaryFile(_ file: URL) -> Bool {
        state.withLock { state in
            guard !state.phase.isFinished else { return false }
            state.temporaryFiles.append(file)
            return true
        }
    }
    var startTime: DispatchTime { state[\.startTime] }

    /// Marks the task as waiting for a slot; `false` when it was cancelled first.
    func enqueue(_ transportRequest: TransportRequest) -> Bool {
        state.withLock {
            guard !$0.isCancelled, case .created = $0.phase else { return false }
            $0.phase = .queued
            $0.transportRequest = transportRequest
            $0.startTime = .now()
            return true
        }
    }

    /// Records the transport task once sending began; `false` when the task finished meanwhile.
    func began(_ transportTask: any TransportTask) -> Bool {
        state.withLock {
            guard case .queued = $0.phase else { return false }
            $0.phase = .running(transportTask)
            return true
        }
    }

    /// Accumulates the response head and body, and reports upload progress.
    func record(_ event: TransportEvent) {
        if case .uploadProgress(let sent, let total) = event {
            uploadReporter.report(TransferProgress(completedBytes: sent, totalBytes: total))
            return
        }
        state.withLock {
            switch event {
            case .responseHead(let statusCode, let headers):
                $0.head = (statusCode, headers)
                $0.body = Data()
            case .body(let chunk): $0.body.append(chunk)
            case .uploadProgress, .completed, .metrics: break
            }
        }
    }

    /// Cancels the transport's current attempt without cancelling the task: a download restarts.
    func abandonAttempt() {
        let attempt = state.withLock { state -> (any TransportTask)? in
            if case .running(let transportTask) = state.phase { return transportTask }
            return nil
        }
        attempt?.cancel()
    }

    /// Records the transport task of a new attempt; `false` when the task finished meanwhile.
    func retried(with transportTask: any TransportTask) -> Bool {
        state.withLock {
            guard case .running = $0.phase, !$0.isCancelled else { return false }
            $0.phase = .running(transportTask)
            return true
        }
    }

    /// The response assembled from what the transport delivered; `nil` if no head arrived.
    func receivedResponse() -> Response? {
        state.withLock { state in
            state.head.map { Response(statusCode: $0.statusCode, headers: $0.headers, data: state.body) }
        }
    }

    /// Records the outcome and returns the phase the task finished from; `nil` when it had
    /// already finished, so that each task finishes once.
    func finish(response: Response?, error: ErrandError?) -> Phase? {
        let finished = state.withLock { state -> (Phase, [URL], DownloadReceiver?)? in
            let previous = state.phase
            if previous.isFinished { return nil }
            state.phase = .finished
            state.response = response
            state.error = error
            defer { state.temporaryFiles = [] }
            return (previous, state.temporaryFiles, state.download)
        }
        guard let (previous, temporaryFiles, download) = finished else { return nil }
        // A cancel can arrive while chunks are still being written: keep what is on disk.
        download?.suspend()
        for file in temporaryFiles {
            try? FileManager.default.removeItem(at: file)
        }
        uploadReporter.finish()
        downloadReporter.finish()
        return previous
    }

    /// Holds this task's callback until `group` is empty: cache-then-network's fresh response
    /// follows the cached one even on a concurrent callback queue.
    func deliver(after group: DispatchGroup) {
        state.withLock { $0.deliveryPredecessor = group }
    }

    /// Runs the accessories and the one callback, on `callbackQueue` — or the main queue for a
    /// delegate, or inline for `async` callers — and drops the callbacks.
    func deliver(on callbackQueue: DispatchQueue) {
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
            switch completion {
            case .closures(let success, let failure):
                if case .success = outcome { success?(self) } else { failure?(self) }
            case .delegate(let box):
                MainActor.assumeIsolated {
                    if case .success = outcome {
                        box.delegate?.requestFinished(self)
                    } else {
                        box.delegate?.requestFailed(self)
                    }
                }
            case .continuation(let resume):
                resume(outcome)
            }
            accessories.forEach { $0.requestDidStop(self) }
        }
        switch completion {
        case .closures:
            if let predecessor {
                predecessor.notify(queue: callbackQueue, execute: run)
            } else {
                callbackQueue.async(execute: run)
            }
        case .delegate: DispatchQueue.main.async(execute: run)
        case .continuation: run()
        }
    }
}

extension RequestTask: CustomStringConvertible {
    /// The request's type, method and URL, its outcome, header fields and a `curl` command
    /// that repeats it — credentials, cookies and token-like arguments redacted.
    public var description: String {
        let (transportRequest, response, error) = state.withLock { ($0.transportRequest, $0.response, $0.error) }
        let name = String(describing: type(of: request))
        guard let transportRequest else {
            if let response, response.isDataFromCache {
                return "<RequestTask \(name): served from the cache → \(response.statusCode)>"
            }
            return "<RequestTask \(name): not started\(error.map { ", \($0)" } ?? "")>"
        }
        let outcome = error.map { "failed: \($0)" } ?? response.map { "\($0.statusCode)" } ?? "running"
        var lines = [
            "<RequestTask \(name): \(transportRequest.method) \(Redactor.url(transportRequest.url)) → \(outcome)>"
        ]
        lines += Redactor.headers(transportRequest.headers).map { "  \($0.name): \($0.value)" }
        lines.append(CurlCommand(request: transportRequest).description)
        return lines.joined(separator: "\n")
    }
}
