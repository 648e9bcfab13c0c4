import Dispatch
import Foundation

/// Reading and managing the response cache, and showing a cached response before the fresh one.
extension NetworkAgent {
    /// Calls `success` with the cached response at once, if there is one, and again with the
    /// fresh one from the network — the usual screen refresh.
    ///
    /// The cached call gets its own finished task with ``RequestTask/isDataFromCache`` `true`
    /// (and ``Response/isStale`` when the entry is expired, which is served here); the network
    /// call follows it on the callback queue, with the task this method returns. A failure of
    /// the network calls `failure` after the cached `success`. Entries stored under another
    /// `cacheVersion`, `cacheSensitiveData` or app version are never served. The network call
    /// carries the cached entry's validator, so an unchanged resource costs a `304`, answered
    /// with the entry (``Response/isRevalidated``).
    @discardableResult
    public func startCacheThenNetwork(
        _ request: any BaseRequest, success: (@Sendable (RequestTask) -> Void)? = nil,
        failure: (@Sendable (RequestTask) -> Void)? = nil
    ) -> RequestTask {
        let task = pipeline.makeTask(request, completion: .closures(success: success, failure: failure))
        let cached = displayableCache(for: request)
        if let cached {
            let delivered = DispatchGroup()
            delivered.enter()
            let cachedTask = pipeline.makeTask(
                request,
                completion: .closures(
                    success: {
                        success?($0); delivered.leave()
                    }, failure: { _ in delivered.leave() }))
            task.deliver(after: delivered)
            pipeline.serve(cachedTask, from: cached)
        }
        // The cached entry's validator makes the network call a cheap 304 when nothing changed.
        pipeline.start(task, readsCache: false, revalidating: cached)
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
            let cached = displayableCache(for: request)
            if let cached {
                pipeline.serve(
                    pipeline.makeTask(
                        request, completion: .continuation { continuation.yield(with: $0.mapError { $0 }) }),
                    from: cached)
            }
            let task = pipeline.makeTask(
                request,
                completion: .continuation { result in
                    continuation.yield(with: result.mapError { $0 })
                    continuation.finish()
                })
            continuation.onTermination = { _ in task.cancel() }
            pipeline.start(task, readsCache: false, revalidating: cached)
        }
    }

    // MARK: The cache

    /// The cached response of `request`, never the network.
    /// - Throws: ``ErrandError/cacheMiss(_:)`` with the reason no entry could be served, or
    ///   ``ErrandError/serialization(_:)`` when its `cacheKeyArguments` cannot be encoded, or
    ///   ``ErrandError/fileSystem(_:)`` when a ``CacheDirPathFilter`` leads outside the cache directory.
    public func loadCache(_ request: any BaseRequest) throws(ErrandError) -> Response {
        try loadCache(request, allowingExpired: false)
    }

    /// The cached response of `request`, never the network; with `allowingExpired`, an expired
    /// entry too, marked ``Response/isStale`` — what offline mode serves (see ``CachePolicy/cacheOnly``).
    /// An entry stored under another `cacheVersion`, `cacheSensitiveData` or app version is never served.
    /// - Throws: as ``loadCache(_:)``, and never `.cacheMiss(.expired)` when `allowingExpired`.
    public func loadCache(_ request: any BaseRequest, allowingExpired: Bool) throws(ErrandError) -> Response {
        guard let settings = try CacheSettings(request: request, config: config) else { throw .cacheMiss(.disabled) }
        switch try lookup(request, settings, allowingExpired: allowingExpired) {
        case .hit(let response): return response
        case .miss(let reason, _, _): throw .cacheMiss(reason)
        case .varies: throw .cacheMiss(.missing)
        }
    }

    /// What the cache holds for `request`; where its URL's responses vary on the request, the
    /// variant the request as built selects. Nothing is sent, so the fields interceptors would
    /// add (a credential) are not among them: a response stored for one is not found.
    private func lookup(_ request: any BaseRequest, _ settings: CacheSettings, allowingExpired: Bool = false)
        throws(ErrandError) -> ResponseCache.Lookup
    {
        let found = pipeline.cache.lookup(settings, allowingExpired: allowingExpired)
        guard case .varies = found else { return found }
        let built = try TransportRequestBuilder.build(
            request, config: config, sessionSetsUserAgent: pipeline.sessionSetsUserAgent)
        return pipeline.cache.lookup(
            settings, sending: pipeline.sentFields.headers(of: built.request), allowingExpired: allowingExpired)
    }

    /// Stores `response` as the cached entry of `request`, as if `request` had received it — for
    /// example to fill the entries of detail requests from one list response. Does nothing when
    /// `request` does not cache. Unlike the stores after a response, which go to disk in the
    /// background, this one is on disk when it returns; it blocks the calling thread until then,
    /// so `async` code calls the `async` overload instead.
    /// - Throws: ``ErrandError/serialization(_:)`` when its `cacheKeyArguments` cannot be encoded;
    ///   ``ErrandError/fileSystem(_:)`` when a ``CacheDirPathFilter`` leads outside the cache
    ///   directory, or the entry cannot be written (a full disk, a cache folder that is a file).
    @available(*, noasync, message: "In async code, use saveCache(_:for:): it does not block a thread of the pool")
    public func saveCacheSync(_ response: Response, for request: any BaseRequest) throws(ErrandError) {
        guard let settings = try CacheSettings(request: request, config: config) else { return }
        try pipeline.cache.apply(pipeline.cache.storing(response, as: settings))
    }

    /// Stores `response` as the cached entry of `request`, on disk when it returns; as the
    /// blocking ``saveCacheSync(_:for:)``, but suspending instead of blocking the calling thread.
    public func saveCache(_ response: Response, for request: any BaseRequest) async throws(ErrandError) {
        guard let settings = try CacheSettings(request: request, config: config) else { return }
        try await pipeline.cache.apply(pipeline.cache.storing(response, as: settings))
    }

    /// Deletes the cached entry of `request`, from memory and disk, blocking the calling thread
    /// until the file is gone (after any write of it still queued); `async` code calls the
    /// `async` overload instead.
    /// - Throws: ``ErrandError/serialization(_:)`` when its `cacheKeyArguments` cannot be encoded, or
    ///   ``ErrandError/fileSystem(_:)`` when a ``CacheDirPathFilter`` leads outside the cache directory.
    @available(*, noasync, message: "In async code, use removeCache(_:): it does not block a thread of the pool")
    public func removeCacheSync(_ request: any BaseRequest) throws(ErrandError) {
        let key = try CacheKey(request: request, config: config)
        try? pipeline.cache.apply(.remove(key))
    }

    /// Deletes the cached entry of `request`, from memory and disk; as the synchronous
    /// ``removeCacheSync(_:)``, but suspending instead of blocking the calling thread.
    public func removeCache(_ request: any BaseRequest) async throws(ErrandError) {
        let key = try CacheKey(request: request, config: config)
        try? await pipeline.cache.apply(.remove(key))
    }

    /// Deletes every cached entry under `directory` — one account's folder, say — or, by default,
    /// under ``NetworkConfig/cacheDirectory``, blocking the calling thread until the entries are
    /// gone; `async` code calls the `async` overload instead. A directory outside the cache
    /// directory holds no entry and is left alone. Only Errand's entries go: files of the app's
    /// own in those folders stay, and so do the folders that hold them. A response to a request
    /// started before the clearing is not stored there afterwards.
    @available(*, noasync, message: "In async code, use clearCache(in:): it does not block a thread of the pool")
    public func clearCacheSync(in directory: URL? = nil) {
        try? pipeline.cache.apply(.removeAll(under: directory ?? config.cacheDirectory))
    }

    /// Deletes every cached entry under `directory`, by default ``NetworkConfig/cacheDirectory``;
    /// as the blocking ``clearCacheSync(in:)``, but suspending instead of blocking the calling thread.
    public func clearCache(in directory: URL? = nil) async {
        try? await pipeline.cache.apply(.removeAll(under: directory ?? config.cacheDirectory))
    }

    /// Blocks the calling thread until every stored response is on disk. Stores are written in
    /// the background and served from memory meanwhile; wait before exiting a process, or before
    /// another agent reads the files. `async` code calls the `async` overload instead.
    @available(*, noasync, message: "In async code, use waitForCacheWrites(): it does not block a thread of the pool")
    public func waitForCacheWritesSync() {
        try? pipeline.cache.apply(.flush)
    }

    /// Returns once every stored response is on disk; as the blocking ``waitForCacheWritesSync()``,
    /// but suspending instead of blocking the calling thread.
    public func waitForCacheWrites() async {
        try? await pipeline.cache.apply(.flush)
    }

    /// What cache-then-network shows first: the entry even if expired, never another version's or account's.
    private func displayableCache(for request: any BaseRequest) -> Response? {
        guard let settings = try? CacheSettings(request: request, config: config) else { return nil }
        switch try? lookup(request, settings) {
        case .hit(let response): return response
        case .miss(_, let stale, _): return stale
        case .varies, nil: return nil
        }
    }
}
