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

    let pipeline: RequestPipeline
    /// The batches and chains running on this agent.
    let groups = GroupRegistry()

    /// Creates an agent.
    /// - Parameters:
    ///   - config: The settings it reads. Default ``NetworkConfig/shared``.
    ///   - transport: The engine it sends with. Default: ``CurlTransport`` on Linux when libcurl
    ///     loads, else ``URLSessionTransport``; either with the config's `sessionConfiguration`
    ///     and `connection`.
    ///     The environment variable `ERRAND_TRANSPORT` (`curl` or `urlsession`) overrides it.
    public convenience init(config: NetworkConfig = .shared, transport: (any Transport)? = nil) {
        self.init(config: config, transport: transport, retryTimer: .dispatch)
    }

    init(
        config: NetworkConfig, transport: (any Transport)?, retryTimer: RetryTimer,
        mainQueueWatch: MainQueueWatch = .shared
    ) {
        self.config = config
        let transport =
            transport
            ?? DefaultTransport.make(configuration: config.sessionConfiguration, connection: config.connection)
        pipeline = RequestPipeline(
            config: config, transport: transport, retryTimer: retryTimer, mainQueueWatch: mainQueueWatch)
    }

    /// How many requests run at once; the rest wait in ``RequestPriority`` order. Default `6`,
    /// URLSession's connection limit per host, so that priorities decide what goes first.
    public var maxConcurrentRequests: Int {
        get { pipeline.scheduler.maxConcurrent }
        set { pipeline.scheduler.maxConcurrent = newValue }
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
    /// ``BaseRequest/cacheTimeInSeconds`` and ``BaseRequest/cachePolicy``. `tag` and `userInfo`
    /// (default `0` and empty) are the task's from the start, so accessories and a cache-served
    /// callback see them.
    @discardableResult
    public func start(
        _ request: any BaseRequest, tag: Int = 0, userInfo: [String: any Sendable] = [:],
        success: (@Sendable (RequestTask) -> Void)? = nil, failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        run(request, .closures(success: success, failure: failure), readsCache: true, tag: tag, userInfo: userInfo)
    }

    /// Starts `request`; `delegate`, held weakly, is told on the main queue when it ends.
    /// `tag` and `userInfo` are as in ``start(_:tag:userInfo:success:failure:)``.
    @discardableResult
    public func start(
        _ request: any BaseRequest, tag: Int = 0, userInfo: [String: any Sendable] = [:],
        delegate: any RequestDelegate
    ) -> RequestTask {
        run(request, .delegate(.init(delegate: delegate)), readsCache: true, tag: tag, userInfo: userInfo)
    }

    /// Starts `request` without reading the cache first; a fresh response is still stored.
    @discardableResult
    public func startWithoutCache(
        _ request: any BaseRequest, tag: Int = 0, userInfo: [String: any Sendable] = [:],
        success: (@Sendable (RequestTask) -> Void)? = nil, failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        run(request, .closures(success: success, failure: failure), readsCache: false, tag: tag, userInfo: userInfo)
    }

    /// Starts `request`; one of the closures runs on the main actor when it ends, whatever
    /// ``NetworkConfig/callbackQueue`` says, so main-actor code can update its own state in them.
    ///
    /// ```swift
    /// @MainActor final class ProfileModel {
    ///     var name = ""
    ///     func load() {
    ///         agent.startOnMainActor(UserApi(), success: { task in self.name = task.responseString ?? "" })
    ///     }
    /// }
    /// ```
    /// Like a delegate's, the task's accessories run on the main queue. `ignoreCache` (default
    /// `false`) skips the cache read, as ``startWithoutCache(_:tag:userInfo:success:failure:)`` does;
    /// `tag` and `userInfo` are as in ``start(_:tag:userInfo:success:failure:)``.
    @discardableResult
    public func startOnMainActor(
        _ request: any BaseRequest, ignoreCache: Bool = false, tag: Int = 0, userInfo: [String: any Sendable] = [:],
        success: (@MainActor (RequestTask) -> Void)? = nil, failure: (@MainActor (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        run(
            request, .mainActor(success: success, failure: failure), readsCache: !ignoreCache, tag: tag,
            userInfo: userInfo)
    }

    /// Sends `request` and returns its validated response, or a valid cached one unless `ignoreCache`.
    ///
    /// Cancelling the calling Swift task cancels the request, which then throws ``ErrandError/cancelled``.
    public func response(_ request: any BaseRequest, ignoreCache: Bool = false) async throws(ErrandError) -> Response {
        let caller = AwaitingCaller()
        let box = Locked<RequestTask?>(nil)
        let result = await withTaskCancellationHandler {
            let task = pipeline.makeTask(request, completion: .awaiting(caller))
            box.withLock { $0 = task }
            pipeline.start(task, readsCache: !ignoreCache)
            if Task.isCancelled { task.cancel() }
            return await caller.outcome()
        } onCancel: {
            box.withLock { $0 }?.cancel()
        }
        return try result.get()
    }

    /// Sends `request` and blocks the calling thread until its validated response, or a valid
    /// cached one unless `ignoreCache`, is there: for scripts and command-line tools.
    ///
    /// It needs neither the main queue nor ``NetworkConfig/callbackQueue``, so calling it on
    /// either cannot deadlock — but it blocks that thread, so an app never calls it on main.
    /// In `async` code, use ``response(_:ignoreCache:)``: blocking a thread of the Swift
    /// concurrency pool could starve the interceptors this request needs.
    @available(*, noasync, message: "In async code, use response(_:ignoreCache:)")
    public func responseSync(_ request: any BaseRequest, ignoreCache: Bool = false) throws(ErrandError) -> Response {
        let finished = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<Response, ErrandError>>(.failure(.cancelled))
        let task = pipeline.makeTask(
            request,
            completion: .continuation { result in
                outcome.withLock { $0 = result }
                finished.signal()
            })
        pipeline.start(task, readsCache: !ignoreCache)
        finished.wait()
        return try outcome.withLock { $0 }.get()
    }

    /// Sends `request` and decodes its JSON body as `type`.
    /// - Throws: ``ErrandError/decoding(_:)`` when the body does not decode, or any error of ``response(_:ignoreCache:)``.
    public func decoded<T: Decodable>(
        _ request: any BaseRequest, _ type: T.Type, decoder: JSONDecoder = JSONDecoder()
    ) async throws(ErrandError) -> T {
        try await response(request).decode(type, decoder: decoder)
    }

    /// Cancels every request, batch and chain this agent is running or has queued; each calls
    /// back with ``ErrandError/cancelled``.
    public func cancelAllRequests() {
        // Groups first, so that a chain starts no further step.
        groups.cancelAll()
        // Queued tasks first: cancelling a running one frees a slot a queued one would take.
        for task in pipeline.scheduler.liveTasks {
            task.cancel()
        }
    }

    private func run(
        _ request: any BaseRequest, _ completion: TaskCompletion, readsCache: Bool, tag: Int,
        userInfo: [String: any Sendable]
    ) -> RequestTask {
        let task = pipeline.makeTask(request, completion: completion)
        task.tag = tag
        task.userInfo = userInfo
        pipeline.start(task, readsCache: readsCache)
        return task
    }
}
