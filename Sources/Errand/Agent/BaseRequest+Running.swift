import Foundation

/// Starting a request through ``NetworkAgent/shared``. Each method has a twin on
/// ``NetworkAgent`` that takes the request as its first argument.
extension BaseRequest {
    /// Starts the request; one of the closures runs on ``NetworkConfig/callbackQueue`` when it ends.
    ///
    /// The closures are `@Sendable` and not isolated to any actor: main-actor code that updates
    /// its own state in them uses ``startOnMainActor(ignoreCache:tag:userInfo:success:failure:)``
    /// or ``response(ignoreCache:)`` instead. A command-line tool that blocks its main thread
    /// never gets callbacks on the default main queue; see ``NetworkConfig/callbackQueue``.
    /// `tag` and `userInfo` (default `0` and empty) are the task's from the start, so accessories
    /// and a cache-served callback see them.
    @discardableResult
    public func start(
        tag: Int = 0, userInfo: [String: any Sendable] = [:], success: (@Sendable (RequestTask) -> Void)? = nil,
        failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        NetworkAgent.shared.start(self, tag: tag, userInfo: userInfo, success: success, failure: failure)
    }

    /// Starts the request; one of the closures runs on the main actor when it ends, whatever
    /// ``NetworkConfig/callbackQueue`` says, so a view model can set its own properties in them:
    ///
    /// ```swift
    /// @MainActor final class ProfileModel {
    ///     var name = ""
    ///     func load() {
    ///         UserApi().startOnMainActor(success: { task in self.name = task.responseString ?? "" })
    ///     }
    /// }
    /// ```
    /// See ``NetworkAgent/startOnMainActor(_:ignoreCache:tag:userInfo:success:failure:)``.
    @discardableResult
    public func startOnMainActor(
        ignoreCache: Bool = false, tag: Int = 0, userInfo: [String: any Sendable] = [:],
        success: (@MainActor (RequestTask) -> Void)? = nil, failure: (@MainActor (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        NetworkAgent.shared.startOnMainActor(
            self, ignoreCache: ignoreCache, tag: tag, userInfo: userInfo, success: success, failure: failure)
    }

    /// Starts the request; `delegate`, held weakly, is told on the main queue when it ends.
    @discardableResult
    public func start(tag: Int = 0, userInfo: [String: any Sendable] = [:], delegate: any RequestDelegate)
        -> RequestTask
    {
        NetworkAgent.shared.start(self, tag: tag, userInfo: userInfo, delegate: delegate)
    }

    /// Starts the request without reading the cache first; a fresh response is still stored.
    @discardableResult
    public func startWithoutCache(
        tag: Int = 0, userInfo: [String: any Sendable] = [:], success: (@Sendable (RequestTask) -> Void)? = nil,
        failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        NetworkAgent.shared.startWithoutCache(self, tag: tag, userInfo: userInfo, success: success, failure: failure)
    }

    /// Sends the request and returns its validated response; `ignoreCache` skips the cache read.
    ///
    /// Cancelling the calling Swift task cancels the request, which then throws ``ErrandError/cancelled``.
    public func response(ignoreCache: Bool = false) async throws(ErrandError) -> Response {
        try await NetworkAgent.shared.response(self, ignoreCache: ignoreCache)
    }

    /// Sends the request and returns its body as it arrives, once the head passed
    /// ``statusCodeValidator(_:)``; see ``NetworkAgent/stream(_:)``.
    ///
    /// ```swift
    /// for try await line in try await BuildLogApi(build: 42).stream().lines {
    ///     print(line)
    /// }
    /// ```
    public func stream() async throws(ErrandError) -> ResponseStream {
        try await NetworkAgent.shared.stream(self)
    }

    /// Opens a WebSocket to the request's URL through ``NetworkAgent/shared``; see
    /// ``NetworkAgent/webSocket(_:options:)``.
    ///
    /// ```swift
    /// let socket = try await ChatApi(room: "general").webSocket()
    /// try await socket.send("hello")
    /// for try await message in socket {
    ///     print(try message.decode(ChatLine.self).text)
    /// }
    /// ```
    public func webSocket(options: WebSocketOptions = WebSocketOptions()) async throws(ErrandError) -> WebSocket {
        try await NetworkAgent.shared.webSocket(self, options: options)
    }

    /// Sends the request and blocks until its response is there; see ``NetworkAgent/responseSync(_:ignoreCache:)``.
    @available(*, noasync, message: "In async code, use response(ignoreCache:)")
    public func responseSync(ignoreCache: Bool = false) throws(ErrandError) -> Response {
        try NetworkAgent.shared.responseSync(self, ignoreCache: ignoreCache)
    }

    /// Sends the request and decodes its JSON body as `type`.
    public func decoded<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) async throws(ErrandError)
        -> T
    {
        try await NetworkAgent.shared.decoded(self, type, decoder: decoder)
    }

    /// Calls `success` with the cached response, if any, then with the fresh one; see
    /// ``NetworkAgent/startCacheThenNetwork(_:success:failure:)``.
    @discardableResult
    public func startCacheThenNetwork(
        success: (@Sendable (RequestTask) -> Void)? = nil, failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        NetworkAgent.shared.startCacheThenNetwork(self, success: success, failure: failure)
    }

    /// The cached response, if any, then the fresh one; see ``NetworkAgent/cacheThenNetwork(_:)``.
    public func cacheThenNetwork() -> AsyncThrowingStream<Response, any Error> {
        NetworkAgent.shared.cacheThenNetwork(self)
    }

    /// The cached response, never the network.
    /// - Throws: ``ErrandError/cacheMiss(_:)`` with the reason no entry could be served.
    public func loadCache() throws(ErrandError) -> Response {
        try NetworkAgent.shared.loadCache(self)
    }

    /// The cached response, never the network; with `allowingExpired`, an expired entry too,
    /// marked ``Response/isStale``. See ``NetworkAgent/loadCache(_:allowingExpired:)``.
    public func loadCache(allowingExpired: Bool) throws(ErrandError) -> Response {
        try NetworkAgent.shared.loadCache(self, allowingExpired: allowingExpired)
    }

    /// Stores `response` as this request's cached entry, on disk when it returns, blocking the
    /// calling thread until then; see ``NetworkAgent/saveCacheSync(_:for:)``.
    @available(*, noasync, message: "In async code, use saveCache(_:): it does not block a thread of the pool")
    public func saveCacheSync(_ response: Response) throws(ErrandError) {
        try NetworkAgent.shared.saveCacheSync(response, for: self)
    }

    /// Stores `response` as this request's cached entry, on disk when it returns, suspending
    /// instead of blocking the calling thread.
    public func saveCache(_ response: Response) async throws(ErrandError) {
        try await NetworkAgent.shared.saveCache(response, for: self)
    }

    /// Deletes this request's cached entry, blocking the calling thread until the file is gone.
    @available(*, noasync, message: "In async code, use removeCache(): it does not block a thread of the pool")
    public func removeCacheSync() throws(ErrandError) {
        try NetworkAgent.shared.removeCacheSync(self)
    }

    /// Deletes this request's cached entry, suspending instead of blocking the calling thread.
    public func removeCache() async throws(ErrandError) {
        try await NetworkAgent.shared.removeCache(self)
    }
}
