import Foundation

/// Keeps one request's cached response fresh by sending it again and again, from
/// ``NetworkAgent/keepFresh(_:every:backoff:)``, for as long as the subscription is kept or until
/// ``cancel()``.
public final class FreshnessSubscription: Sendable {
    private let loop: Locked<Task<Void, Never>?>
    private let lastError: Locked<ErrandError?>

    /// The reason the request was refused (``ErrandError/cacheMiss(_:)`` with `.disabled` for a
    /// request that does not cache), or its last send's failure; `nil` once a send succeeds.
    public var error: ErrandError? { lastError[\.self] }

    /// A subscription that never sends: the request was refused.
    init(refusal: ErrandError) {
        loop = Locked(nil)
        lastError = Locked(refusal)
    }

    /// Sends `request` through `agent` now, then `interval` seconds after each send started;
    /// after failures, at least as long as `backoff` says. A send waits while the agent is offline.
    init(_ request: any BaseRequest, agent: NetworkAgent, interval: TimeInterval, backoff: ReconnectBackoff) {
        let lastError = Locked<ErrandError?>(nil)
        self.lastError = lastError
        // The loop holds what it needs, never the subscription, whose release ends it.
        loop = Locked(
            Task {
                var failures = 0
                while !Task.isCancelled {
                    let started = Date()
                    if !agent.config.isOffline {
                        do throws(ErrandError) {
                            _ = try await agent.response(request, ignoreCache: true)
                            failures = 0
                            lastError[\.self] = nil
                        } catch {
                            guard error != .cancelled || !Task.isCancelled else { return }
                            failures += 1
                            lastError[\.self] = error
                        }
                    }
                    var wait = max(0, interval - Date().timeIntervalSince(started))
                    if failures > 0 { wait = max(wait, backoff.delay(afterFailures: failures)) }
                    do {
                        try await backoff.sleep(wait)
                    } catch {
                        return
                    }
                }
            })
    }

    /// Ends the subscription, the send under way included.
    deinit {
        cancel()
    }

    /// Stops sending; a send under way is cancelled. Does nothing the second time.
    public func cancel() {
        loop.withLock { loop in
            loop?.cancel()
            loop = nil
        }
    }
}
