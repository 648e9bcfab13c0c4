import Dispatch
import Foundation

/// Runs requests: builds each into a transport request, queues it by priority, sends it,
/// validates the response and calls back.
///
/// Most apps use ``shared`` through the `start` and `response` methods on ``BaseRequest``.
/// Create another agent to use another configuration or a ``StubTransport`` in tests.
public final class NetworkAgent: Sendable {
    /// The agent behind ``BaseRequest``'s own `start` and `response` methods, using ``NetworkConfig/shared``.
    public static let shared = NetworkAgent()

    /// The configuration this agent reads for every request.
    public let config: NetworkConfig

    private let transport: any Transport
    private let queue: RequestQueue
    private let liveTasks = Locked([ObjectIdentifier: RequestTask]())

    /// Creates an agent.
    /// - Parameters:
    ///   - config: The settings it reads. Default ``NetworkConfig/shared``.
    ///   - transport: The engine it sends with. Default: a ``URLSessionTransport`` with the
    ///     config's `sessionConfiguration`.
    public init(config: NetworkConfig = .shared, transport: (any Transport)? = nil) {
        self.config = config
        self.transport = transport ?? URLSessionTransport(configuration: config.sessionConfiguration)
        self.queue = RequestQueue(maxConcurrent: 6)
    }

    /// How many requests run at once; the rest wait in ``RequestPriority`` order. Default `6`,
    /// URLSession's connection limit per host, so that priorities decide what goes first.
    public var maxConcurrentRequests: Int {
        get { queue.maxConcurrent }
        set { queue.maxConcurrent = newValue }
    }

    /// The URL `request` is sent to, resolved as described at ``BaseRequest/url`` (arguments not included).
    /// - Throws: ``ErrandError/invalidURL(_:)`` when no absolute URL results.
    public func buildRequestUrl(_ request: any BaseRequest) throws(ErrandError) -> URL {
        try RequestURLBuilder.url(for: request, config: config)
    }

    // MARK: Starting

    /// Starts `request`; one of the closures runs on ``NetworkConfig/callbackQueue`` when it ends.
    @discardableResult
    public func start(
        _ request: any BaseRequest, success: (@Sendable (RequestTask) -> Void)? = nil,
        failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        run(request, completion: .closures(success: success, failure: failure))
    }

    /// Starts `request`; `delegate`, held weakly, is told on the main queue when it ends.
    @discardableResult
    public func start(_ request: any BaseRequest, delegate: any RequestDelegate) -> RequestTask {
        run(request, completion: .delegate(.init(delegate: delegate)))
    }

    /// Starts `request` without reading the cache first.
    @discardableResult
    public func startWithoutCache(
        _ request: any BaseRequest, success: (@Sendable (RequestTask) -> Void)? = nil,
        failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        run(request, completion: .closures(success: success, failure: failure))
    }

    /// Sends `request` and returns its validated response.
    ///
    /// Cancelling the calling Swift task cancels the request, which then throws ``ErrandError/cancelled``.
    public func response(_ request: any BaseRequest, ignoreCache: Bool = false) async throws(ErrandError) -> Response {
        let box = Locked<RequestTask?>(nil)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = makeTask(request, completion: .continuation { continuation.resume(returning: $0) })
                box.withLock { $0 = task }
                launch(task)
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            box.withLock { $0 }?.cancel()
        }
        return try result.get()
    }

    /// Sends `request` and decodes its JSON body as `type`.
    /// - Throws: ``ErrandError/decoding(_:)`` when the body does not decode, or any error of ``response(_:ignoreCache:)``.
    public func decoded<T: Decodable>(
        _ request: any BaseRequest, _ type: T.Type, decoder: JSONDecoder = JSONDecoder()
    ) async throws(ErrandError) -> T {
        try await response(request).decode(type, decoder: decoder)
    }

    /// The cached response of `request`, never the network.
    /// - Throws: ``ErrandError/cacheMiss(_:)`` with the reason no entry could be served.
    public func loadCache(_ request: any BaseRequest) throws(ErrandError) -> Response {
        throw .cacheMiss(request.cacheTimeInSeconds > 0 ? .missing : .disabled)
    }

    /// Cancels every request this agent is running or has queued; each calls back with ``ErrandError/cancelled``.
    public func cancelAllRequests() {
        // Queued tasks first: cancelling a running one frees a slot a queued one would take.
        let tasks = liveTasks.withLock { Array($0.values) }
        for task in tasks where !task.isSending {
            task.cancel()
        }
        for task in tasks {
            task.cancel()
        }
    }

    // MARK: Wiring

    private func run(_ request: any BaseRequest, completion: RequestTask.Completion) -> RequestTask {
        let task = makeTask(request, completion: completion)
        launch(task)
        return task
    }

    private func makeTask(_ request: any BaseRequest, completion: RequestTask.Completion) -> RequestTask {
        RequestTask(request: request, completion: completion) { [self] task in
            finish(task, response: task.receivedResponse(), error: .cancelled)
        }
    }

    private func launch(_ task: RequestTask) {
        liveTasks.withLock { $0[ObjectIdentifier(task)] = task }
        task.accessories.forEach { $0.requestWillStart(task) }
        let transportRequest: TransportRequest
        do {
            transportRequest = try TransportRequestBuilder.build(task.request, config: config)
        } catch {
            finish(task, response: nil, error: error)
            return
        }
        guard task.enqueue(transportRequest) else {
            finish(task, response: nil, error: .cancelled)
            return
        }
        queue.enqueue(id: ObjectIdentifier(task), priority: task.request.priority) { [self] in
            send(task, transportRequest)
        }
    }

    private func send(_ task: RequestTask, _ transportRequest: TransportRequest) {
        let transportTask = transport.send(transportRequest) { [self] event in
            task.record(event)
            if case .completed(let error) = event {
                complete(task, url: transportRequest.url, transportError: error)
            }
        }
        if !task.began(transportTask) {
            // Cancelled while the transport was starting: the slot was taken, so give it back.
            transportTask.cancel()
            queue.jobFinished()
        }
    }

    private func complete(_ task: RequestTask, url: URL, transportError: ErrandError?) {
        let response = task.receivedResponse()
        let error: ErrandError?
        if let transportError {
            error = transportError
        } else if let response {
            error = ResponseValidator.validate(response, for: task.request, url: url)
        } else {
            error = .transport(URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: url]))
        }
        finish(task, response: response, error: error)
    }

    private func finish(_ task: RequestTask, response: Response?, error: ErrandError?) {
        switch task.finish(response: response, error: error) {
        case nil: return
        case .running: queue.jobFinished()
        case .queued: queue.remove(id: ObjectIdentifier(task))
        case .created, .finished: break
        }
        liveTasks.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(task)) }
        if config.debugLogEnabled {
            DebugLog.write(DebugLog.line(for: task))
        }
        task.deliver(on: config.callbackQueue)
    }
}
