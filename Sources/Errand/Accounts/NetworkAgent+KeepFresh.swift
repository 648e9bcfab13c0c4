import Foundation

extension NetworkAgent {
    /// Keeps `request`'s cached response fresh: sends it now, then every `interval` seconds
    /// (start to start), storing each success in the cache so that the next start of `request` is
    /// answered at once — the VK SDK's "auto-update cache data for specific requests … at
    /// specified intervals".
    ///
    /// ```swift
    /// let feedKeeper = agent.keepFresh(FeedApi(), every: 30)
    /// // … later, FeedApi().start(…) is served from the cache …
    /// feedKeeper.cancel()   // or release it
    /// ```
    ///
    /// Sends go on while the returned subscription is kept, until its
    /// ``FreshnessSubscription/cancel()``. Each send is a new start of the request — with the
    /// account current then — that skips the cache read and stores the response, as
    /// ``startWithoutCache(_:tag:userInfo:success:failure:)`` does; never two are in flight for one
    /// subscription. While ``NetworkConfig/isOffline`` a send is skipped; after failures the
    /// next waits at least as long as `backoff` says, growing with each failure in a row.
    ///
    /// - Parameters:
    ///   - request: A request that caches (``BaseRequest/cacheTimeInSeconds`` above zero, or
    ///     ``BaseRequest/followsHTTPCaching``); another is refused, the subscription's
    ///     ``FreshnessSubscription/error`` ``ErrandError/cacheMiss(_:)`` with `.disabled`.
    ///   - interval: Seconds from one send's start to the next's.
    ///   - backoff: The wait after failures, and the clock waits are made with. Default
    ///     `ReconnectBackoff()`: 1 second, doubling, at most 60.
    public func keepFresh(
        _ request: some BaseRequest, every interval: TimeInterval, backoff: ReconnectBackoff = ReconnectBackoff()
    ) -> FreshnessSubscription {
        let settings: CacheSettings?
        do {
            settings = try CacheSettings(request: request, config: config)
        } catch {
            return FreshnessSubscription(refusal: error)
        }
        guard settings != nil else { return FreshnessSubscription(refusal: .cacheMiss(.disabled)) }
        return FreshnessSubscription(request, agent: self, interval: max(interval, 0), backoff: backoff)
    }
}
