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
    private let cache: ResponseCache
    private let liveTasks = Locked([ObjectIdentifier: RequestTask]())
    /// The target paths of running downloads: two downloads into one file would corrupt it.
    private let downloadTargets = Locked(Set<String>())

    /// Creates an agent.
    /// - Parameters:
    ///   - config: The settings it reads. Default ``NetworkConfig/shared``.
    ///   - transport: The engine it sends with. Default: a ``URLSessionTransport`` with the
    ///     config's `sessionConfiguration`.
    public init(config: NetworkConfig = .shared, transport: (any Transport)? = nil) {
        self.config = config
        self.transport = transport ?? DefaultTransport.make(configuration: config.sessionConfiguration)
        self.queue = RequestQueue(maxConcurrent: 6)
        self.cache = ResponseCache(config: config)
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
    ///
    /// A request that caches is answered from a valid cached entry without the network; see
    /// ``BaseRequest/cacheTimeInSeconds`` and ``BaseRequest/cachePolicy``.
    @discardableResult
    public func start(
        _ request: any BaseRequest, success: (@Sendable (RequestTask) -> Void)? = nil,
        failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        run(request, completion: .closures(success: success, failure: failure), readsCache: true)
    }

    /// Starts `request`; `delegate`, held weakly, is told on the main queue when it ends.
    @discardableResult
    public func start(_ request: any BaseRequest, delegate: any RequestDelegate) -> RequestTask {
        run(request, completion: .delegate(.init(delegate: delegate)), readsCache: true)
    }

    /// Starts `request` without reading the cache first; a fresh response is still stored.
    @discardableResult
    public func startWithoutCache(
        _ request: any BaseRequest, success: (@Sendable (RequestTask) -> Void)? = nil,
        failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        run(request, completion: .closures(success: success, failure: failure), readsCache: false)
    }

    /// Sends `request` and returns its validated response, or a valid cached one unless `ignoreCache`.
    ///
    /// Cancelling the calling Swift task cancels the request, which then throws ``ErrandError/cancelled``.
    public func response(_ request: any BaseRequest, ignoreCache: Bool = false) async throws(ErrandError) -> Response {
        let box = Locked<RequestTask?>(nil)
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = makeTask(request, completion: .continuation { continuation.resume(returning: $0) })
                box.withLock { $0 = task }
                launch(task, readsCache: !ignoreCache)
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            box.withLock { $0 }?.cancel()
        }
        return try result.get()
    }

    // MARK: Cache then network

    /// Calls `success` with the cached response at once, if there is one, and again with the
    /// fresh one from the network — the usual screen refresh.
    ///
    /// The cached call gets its own finished task with ``RequestTask/isDataFromCache`` `true`
    /// (and ``Response/isStale`` when the entry is expired, which is served here); the network
    /// call follows it on the callback queue, with the task this method returns. A failure of
    /// the network calls `failure` after the cached `success`. Entries stored under another
    /// `cacheVersion`, `cacheSensitiveData` or app version are never served.
    @discardableResult
    public func startCacheThenNetwork(
        _ request: any BaseRequest, success: (@Sendable (RequestTask) -> Void)? = nil,
        failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        let task = makeTask(request, completion: .closures(success: success, failure: failure))
        if let cached = displayableCache(for: request) {
            let delivered = DispatchGroup()
            delivered.enter()
            let cachedTask = makeTask(
                request,
                completion: .closures(
                    success: {
                        success?($0); delivered.leave()
                    }, failure: { _ in delivered.leave() }))
            task.deliver(after: delivered)
            serve(cachedTask, from: cached)
        }
        launch(task, readsCache: false)
        return task
    }

    /// The cached response, if there is one, then the fresh one from the network; the sequence
    /// ends after the fresh response, or throws the ``ErrandError`` the network failed with.
    ///
    /// ```swift
    /// for try await response in agent.cacheThenNetwork(AccountsRequest()) {
    ///     show(try response.decode([Account].self), stale: response.isStale)
    /// }
    /// ```
    /// Cached responses are chosen as in ``startCacheThenNetwork(_:success:failure:)``. Ending
    /// the iteration early cancels the network request.
    public func cacheThenNetwork(_ request: any BaseRequest) -> AsyncThrowingStream<Response, any Error> {
        AsyncThrowingStream { continuation in
            if let cached = displayableCache(for: request) {
                serve(
                    makeTask(request, completion: .continuation { continuation.yield(with: $0.mapError { $0 }) }),
                    from: cached)
            }
            let task = makeTask(
                request,
                completion: .continuation { result in
                    continuation.yield(with: result.mapError { $0 })
                    continuation.finish()
                })
            continuation.onTermination = { _ in task.cancel() }
            launch(task, readsCache: false)
        }
    }

    // MARK: The cache

    /// The cached response of `request`, never the network.
    /// - Throws: ``ErrandError/cacheMiss(_:)`` with the reason no entry could be served, or
    ///   ``ErrandError/serialization(_:)`` when its `cacheKeyArguments` cannot be encoded.
    public func loadCache(_ request: any BaseRequest) throws(ErrandError) -> Response {
        switch try cache.lookup(request) {
        case .hit(let response): return response
        case .miss(let reason, _): throw .cacheMiss(reason)
        }
    }

    /// Stores `response` as the cached entry of `request`, as if `request` had received it — for
    /// example to fill the entries of detail requests from one list response. Does nothing when
    /// `request` does not cache.
    /// - Throws: ``ErrandError/serialization(_:)`` when its `cacheKeyArguments` cannot be encoded.
    public func saveCache(_ response: Response, for request: any BaseRequest) throws(ErrandError) {
        guard let key = try cache.key(for: request) else { return }
        cache.store(response, for: request, key: key)
    }

    /// Deletes the cached entry of `request`, from memory and disk.
    /// - Throws: ``ErrandError/serialization(_:)`` when its `cacheKeyArguments` cannot be encoded.
    public func removeCache(_ request: any BaseRequest) throws(ErrandError) {
        cache.remove(try CacheKey(request: request, config: config))
    }

    /// Deletes every cached entry under `directory` — one account's folder, say — or, by default,
    /// under ``NetworkConfig/cacheDirectory``.
    public func clearCache(in directory: URL? = nil) {
        cache.removeAll(under: directory ?? config.cacheDirectory)
    }

    /// Blocks until every stored response is on disk. Stores are written in the background and
    /// served from memory meanwhile; wait before exiting a process, or before another agent reads the files.
    public func waitForCacheWrites() {
        cache.flush()
    }

    /// Sends `request` and decodes its JSON body as `type`.
    /// - Throws: ``ErrandError/decoding(_:)`` when the body does not decode, or any error of ``response(_:ignoreCache:)``.
    public func decoded<T: Decodable>(
        _ request: any BaseRequest, _ type: T.Type, decoder: JSONDecoder = JSONDecoder()
    ) async throws(ErrandError) -> T {
        try await response(request).decode(type, decoder: decoder)
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

    private func run(_ request: any BaseRequest, completion: RequestTask.Completion, readsCache: Bool) -> RequestTask {
        let task = makeTask(request, completion: completion)
        launch(task, readsCache: readsCache)
        return task
    }

    private func makeTask(_ request: any BaseRequest, completion: RequestTask.Completion) -> RequestTask {
        RequestTask(request: request, completion: completion, callbackQueue: config.callbackQueue) { [self] task in
            finish(task, response: task.receivedResponse(), error: .cancelled)
        }
    }

    private func launch(_ task: RequestTask, readsCache: Bool) {
        liveTasks.withLock { $0[ObjectIdentifier(task)] = task }
        task.accessories.forEach { $0.requestWillStart(task) }
        // Arguments that cannot be encoded fail the request below, when it is built.
        let cacheKey = (try? cache.key(for: task.request)) ?? nil
        if readsCache, let cacheKey, serveFromCache(task, key: cacheKey) {
            return
        }
        let output: TransportRequestBuilder.Output
        do {
            output = try TransportRequestBuilder.build(task.request, config: config)
            try attachDownload(to: task, url: output.request.url)
        } catch {
            finish(task, response: nil, error: error)
            return
        }
        guard let form = output.largeMultipartBody else {
            return enqueue(task, output.request, cacheKey: cacheKey)
        }
        // Encoding a large body into a file takes a while: not on the caller's thread.
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            do throws(ErrandError) {
                let (file, length) = try form.writeTemporaryFile()
                guard task.adoptTemporaryFile(file) else {
                    try? FileManager.default.removeItem(at: file)
                    return
                }
                var request = output.request
                request.bodyFileURL = file
                request.headers["Content-Length"] = String(length)
                enqueue(task, request, cacheKey: cacheKey)
            } catch {
                finish(task, response: nil, error: error)
            }
        }
    }

    private func enqueue(_ task: RequestTask, _ transportRequest: TransportRequest, cacheKey: CacheKey?) {
        guard task.enqueue(transportRequest) else {
            finish(task, response: nil, error: .cancelled)
            return
        }
        queue.enqueue(id: ObjectIdentifier(task), priority: task.request.priority) { [self] in
            send(task, transportRequest, cacheKey: cacheKey)
        }
    }

    /// Gives a GET with a `resumableDownloadPath` its partial file, claiming the target path.
    private func attachDownload(to task: RequestTask, url: URL) throws(ErrandError) {
        guard let path = task.request.resumableDownloadPath, task.request.method == .get else { return }
        let partial = try PartialDownload(targetPath: path, url: url)
        guard downloadTargets.withLock({ $0.insert(partial.targetURL.path).inserted }) else {
            throw .serialization("download to \(partial.targetURL.path): another download to this file is running")
        }
        task.download = DownloadReceiver(partial: partial, progress: task.downloadReporter)
    }

    /// Finishes `task` from the cache when its entry may be served; `false` sends it to the network.
    private func serveFromCache(_ task: RequestTask, key: CacheKey) -> Bool {
        switch cache.lookup(task.request, key: key) {
        case .hit(let response):
            finish(task, response: response, error: nil)
            return true
        case .miss(_, let stale?) where task.request.cachePolicy == .staleWhileRevalidate:
            finish(task, response: stale, error: nil)
            revalidate(task.request, key: key)
            return true
        case .miss:
            return false
        }
    }

    /// Refreshes an expired entry in the background, once per entry at a time.
    private func revalidate(_ request: any BaseRequest, key: CacheKey) {
        guard cache.beginRevalidation(key) else { return }
        let refresh = makeTask(request, completion: .continuation { [cache] _ in cache.endRevalidation(key) })
        launch(refresh, readsCache: false)
    }

    /// What cache-then-network shows first: the entry even if expired, never another version's or account's.
    private func displayableCache(for request: any BaseRequest) -> Response? {
        switch try? cache.lookup(request) {
        case .hit(let response): response
        case .miss(_, let stale): stale
        case nil: nil
        }
    }

    /// Finishes a task that was never sent with a cached response, accessories and all.
    private func serve(_ task: RequestTask, from response: Response) {
        task.accessories.forEach { $0.requestWillStart(task) }
        finish(task, response: response, error: nil)
    }

    private func send(
        _ task: RequestTask, _ transportRequest: TransportRequest, cacheKey: CacheKey?, isRetry: Bool = false
    ) {
        let download = task.download
        let request = download?.prepare(transportRequest) ?? transportRequest
        let transportTask = transport.send(request) { [self] event in
            switch download?.receive(event) ?? .record {
            case .record:
                task.record(event)
                if case .completed(let error) = event {
                    complete(task, url: request.url, transportError: error, cacheKey: cacheKey)
                }
            case .consumed:
                break
            case .restart:
                if case .completed = event {
                    send(task, transportRequest, cacheKey: cacheKey, isRetry: true)
                } else {
                    task.abandonAttempt()
                }
            case .fail(let error):
                task.abandonAttempt()
                finish(task, response: nil, error: error)
            }
        }
        guard isRetry ? task.retried(with: transportTask) : task.began(transportTask) else {
            // Finished while the transport was starting. A first attempt had just taken a slot: give it back.
            transportTask.cancel()
            if !isRetry { queue.jobFinished() }
            return
        }
    }

    private func complete(_ task: RequestTask, url: URL, transportError: ErrandError?, cacheKey: CacheKey?) {
        var response = task.receivedResponse()
        var error: ErrandError?
        if let transportError {
            error = transportError
        } else if let response {
            error = ResponseValidator.validate(response, for: task.request, url: url)
        } else {
            error = .transport(URLError(.badServerResponse, userInfo: [NSURLErrorFailingURLErrorKey: url]))
        }
        if let download = task.download {
            (response, error) = download.conclude(response, error: error)
        }
        if let error, let cacheKey, let fallback = offlineFallback(for: task.request, key: cacheKey, after: error) {
            return finish(task, response: fallback, error: nil)
        }
        if error == nil, let response, let cacheKey {
            cache.store(response, for: task.request, key: cacheKey)
        }
        finish(task, response: response, error: error)
    }

    /// The entry ``CachePolicy/offlineFallback`` serves when the network failed, valid or expired.
    private func offlineFallback(for request: any BaseRequest, key: CacheKey, after error: ErrandError) -> Response? {
        guard request.cachePolicy == .offlineFallback, error.isNetworkFailure else { return nil }
        switch cache.lookup(request, key: key) {
        case .hit(let response): return response
        case .miss(_, let stale): return stale
        }
    }

    private func finish(_ task: RequestTask, response: Response?, error: ErrandError?) {
        switch task.finish(response: response, error: error) {
        case nil: return
        case .running: queue.jobFinished()
        case .queued: queue.remove(id: ObjectIdentifier(task))
        case .created, .finished: break
        }
        liveTasks.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(task)) }
        if let download = task.download {
            downloadTargets.withLock { _ = $0.remove(download.partial.targetURL.path) }
        }
        if config.debugLogEnabled {
            DebugLog.write(DebugLog.line(for: task))
        }
        task.deliver(on: config.callbackQueue)
    }
}
