import Dispatch
import Foundation

/// The cache's stages: whether what a lookup found answers the request, how offline mode and a
/// background refresh use the cache, and which entry stands in for a failure.
extension RequestPipeline {
    /// Serves what a lookup `found` if it may; otherwise sends `task`, asking about the expired
    /// entry — or, where the URL's responses vary on the request, choosing among them once the
    /// request is final (``chooseVariant(_:_:_:then:)``).
    func serveOrSend(
        _ task: RequestTask, _ plan: RequestPlan, _ settings: CacheSettings, _ found: ResponseCache.Lookup
    ) {
        guard case .varies = found else {
            return serve(task, plan, settings, found) { [self] stale in sendToNetwork(task, plan, revalidating: stale) }
        }
        var plan = plan
        plan.choosesVariantAsSent = true
        sendToNetwork(task, plan, revalidating: nil)
    }

    /// Serves what a lookup `found` if it may; otherwise calls `send` with the expired entry to ask about.
    private func serve(
        _ task: RequestTask, _ plan: RequestPlan, _ settings: CacheSettings, _ found: ResponseCache.Lookup,
        orSend send: (Response?) -> Void
    ) {
        switch found {
        case .hit(let response):
            serveCached(task, response, error: refusal(of: response, plan))
        case .miss(_, let stale?, let uses) where uses.contains(.whileRevalidating):
            serveCached(task, stale, error: refusal(of: stale, plan))
            revalidate(task.request, settings.key, stale)
        case .miss(_, let stale, _) where !Self.onlyIfCached(settings):
            send(stale)
        case .varies where !Self.onlyIfCached(settings):
            send(nil)
        case .miss, .varies:
            finish(task, response: nil, error: .cacheMiss(.missing))
        }
    }

    /// Whether the request's `only-if-cached` forbids the network.
    private static func onlyIfCached(_ settings: CacheSettings) -> Bool {
        settings.followsHTTPCaching && settings.requestCacheControl.contains("only-if-cached")
    }

    /// The cache's stage once the request is final, for a URL whose stored responses vary on
    /// the request (``RequestPlan/choosesVariantAsSent``): the variant the fields `outgoing` goes
    /// out with select answers `task`, or `send` gets `outgoing` asking about its expired entry.
    /// Any other request goes straight on to `send`.
    func chooseVariant(
        _ task: RequestTask, _ plan: RequestPlan, _ outgoing: TransportRequest,
        then send: @escaping @Sendable (RequestPlan, TransportRequest) -> Void
    ) {
        guard plan.choosesVariantAsSent, let settings = plan.cache else { return send(plan, outgoing) }
        var plan = plan
        plan.choosesVariantAsSent = false
        let sent = sentFields.headers(of: outgoing)
        let answer: @Sendable (ResponseCache.Lookup) -> Void = { [self, plan] found in
            serve(task, plan, settings, found) { stale in
                var plan = plan
                var outgoing = outgoing
                Self.ask(about: stale, in: &outgoing, plan: &plan)
                send(plan, outgoing)
            }
        }
        if let found = cache.lookupInMemory(settings, sending: sent) { return answer(found) }
        // A file to read: not on a thread of the pool, nor a caller's.
        Self.cacheReader.async { [cache] in answer(cache.lookup(settings, sending: sent)) }
    }

    /// Makes `request` conditional on the validator of `stale`, the expired entry it replaces, so
    /// that a `304` answers it with that entry — unless it carries a condition of its own.
    static func ask(about stale: Response?, in request: inout TransportRequest, plan: inout RequestPlan) {
        guard let stale, let revalidation = Revalidation(stored: stale, requestHeaders: request.headers) else { return }
        for (name, value) in revalidation.conditionalHeaders { request.headers.setHeaderField(name, value) }
        plan.revalidation = revalidation
    }

    /// The error a stored response is served with: an HTTP cache keeps statuses the validator
    /// refuses too (a `404` with `max-age`), and they are judged as they were from the network.
    func refusal(of stored: Response, _ plan: RequestPlan) -> ErrandError? {
        guard plan.cache?.followsHTTPCaching == true, !plan.rules.acceptsStatus(stored.statusCode) else { return nil }
        return .statusCode(stored.statusCode)
    }

    /// Finishes `task` from the newest entry whatever its age, or with the reason there is none;
    /// offline mode never sends, so a request that does not cache fails `.cacheMiss(.disabled)`.
    func serveOffline(_ task: RequestTask, _ plan: RequestPlan, sending sent: [String: String]? = nil) {
        guard let settings = plan.cache else { return finish(task, response: nil, error: .cacheMiss(.disabled)) }
        let serve: @Sendable (ResponseCache.Lookup) -> Void = { [self] found in
            switch found {
            case .hit(let response): serveCached(task, response, error: refusal(of: response, plan))
            case .miss(let reason, _, _): finish(task, response: nil, error: .cacheMiss(reason))
            case .varies: serveOfflineAsSent(task, plan)
            }
        }
        if let found = cache.lookupInMemory(settings, sending: sent, allowingExpired: true) { return serve(found) }
        Self.cacheReader.async { [cache] in serve(cache.lookup(settings, sending: sent, allowingExpired: true)) }
    }

    /// Serves `task` offline from the variant the request would go out with: built and adapted
    /// as for the network — the credential an interceptor applies chooses too — but never sent.
    private func serveOfflineAsSent(_ task: RequestTask, _ plan: RequestPlan) {
        let built: TransportRequest
        do {
            built = try TransportRequestBuilder.build(
                task.request, config: config, sessionSetsUserAgent: sessionSetsUserAgent
            ).request
        } catch {
            return finish(task, response: nil, error: error)
        }
        guard !plan.interceptors.isEmpty else {
            return serveOffline(task, plan, sending: sentFields.headers(of: built))
        }
        task.wait {
            let adapting = Task { [self] in
                do throws(ErrandError) {
                    let adapted = try await plan.interceptors.adapt(built, for: task)
                    serveOffline(task, plan, sending: sentFields.headers(of: adapted))
                } catch {
                    finish(task, response: nil, error: error)
                }
            }
            return { adapting.cancel() }
        }
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
    func staleFallback(
        _ settings: CacheSettings?, sending sent: [String: String]?, response: Response?, error: ErrandError?
    ) -> Response? {
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
        switch cache.lookup(settings, sending: sent) {
        case .hit(let response): return settings.policy == .offlineFallback ? response : nil
        case .miss(_, let stale, let uses): return uses.contains(needed) ? stale : nil
        case .varies: return nil
        }
    }
}
