import Dispatch
import Foundation

/// The cache's stages: whether what a lookup found answers the request, how offline mode and a
/// background refresh use the cache, and which entry stands in for a failure.
extension RequestPipeline {
    /// Serves what a lookup `found` if it may; otherwise sends `task`, asking about the expired entry.
    func serveOrSend(
        _ task: RequestTask, _ plan: RequestPlan, _ settings: CacheSettings, _ found: ResponseCache.Lookup
    ) {
        switch found {
        case .hit(let response):
            serveCached(task, response, error: refusal(of: response, plan))
        case .miss(_, let stale?, let uses) where uses.contains(.whileRevalidating):
            serveCached(task, stale, error: refusal(of: stale, plan))
            revalidate(task.request, settings.key, stale)
        case .miss where settings.followsHTTPCaching && settings.requestCacheControl.contains("only-if-cached"):
            finish(task, response: nil, error: .cacheMiss(.missing))
        case .miss(_, let stale, _):
            sendToNetwork(task, plan, revalidating: stale)
        }
    }

    /// The error a stored response is served with: an HTTP cache keeps statuses the validator
    /// refuses too (a `404` with `max-age`), and they are judged as they were from the network.
    func refusal(of stored: Response, _ plan: RequestPlan) -> ErrandError? {
        guard plan.cache?.followsHTTPCaching == true, !plan.rules.acceptsStatus(stored.statusCode) else { return nil }
        return .statusCode(stored.statusCode)
    }

    /// Finishes `task` from the newest entry whatever its age, or with the reason there is none;
    /// offline mode never sends, so a request that does not cache fails `.cacheMiss(.disabled)`.
    func serveOffline(_ task: RequestTask, _ plan: RequestPlan) {
        guard let settings = plan.cache else { return finish(task, response: nil, error: .cacheMiss(.disabled)) }
        let serve: @Sendable (ResponseCache.Lookup) -> Void = { [self] found in
            switch found {
            case .hit(let response): serveCached(task, response, error: refusal(of: response, plan))
            case .miss(let reason, _, _): finish(task, response: nil, error: .cacheMiss(reason))
            }
        }
        if let found = cache.lookupInMemory(settings, allowingExpired: true) { return serve(found) }
        Self.cacheReader.async { [cache] in serve(cache.lookup(settings, allowingExpired: true)) }
    }

    /// Refreshes the expired entry `stale` in the background, once per entry at a time.
    func revalidate(_ request: any BaseRequest, _ key: CacheKey, _ stale: Response) {
        guard cache.beginRevalidation(key) else { return }
        let task = makeTask(request, completion: .continuation { [cache] _ in cache.endRevalidation(key) })
        start(task, readsCache: false, revalidating: stale)
    }

    /// The entry served in place of a failure: after a network failure, a valid entry under
    /// ``CachePolicy/offlineFallback`` or an expired one its uses allow; in place of a `500`,
    /// `502`, `503` or `504`, an expired one within the server's `stale-if-error` (RFC 5861 §4).
    func staleFallback(_ settings: CacheSettings?, response: Response?, error: ErrandError?) -> Response? {
        // Only the policy or the server's directives let an entry answer for a failure: for the
        // rest, a failure reads no cache.
        guard let settings, settings.policy == .offlineFallback || settings.followsHTTPCaching else { return nil }
        let needed: StaleUse
        if error?.isNetworkFailure == true {
            needed = .onNetworkFailure
        } else if settings.followsHTTPCaching, let status = response?.statusCode,
            StaleUse.serverErrorStatusCodes.contains(status)
        {
            needed = .onServerError
        } else {
            return nil
        }
        switch cache.lookup(settings) {
        case .hit(let response): return settings.policy == .offlineFallback ? response : nil
        case .miss(_, let stale, let uses): return uses.contains(needed) ? stale : nil
        }
    }
}
