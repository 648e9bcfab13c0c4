/// When an expired entry may still answer: by the app's ``CachePolicy`` and, for an HTTP cache,
/// by the server's `stale-while-revalidate` and `stale-if-error` (RFC 5861) — never, for an HTTP
/// cache, once the server said `must-revalidate` or `no-cache` (RFC 9111 §4.2.4).
struct StaleUse: OptionSet, Sendable {
    let rawValue: Int

    /// Served at once, while a background request refreshes it.
    static let whileRevalidating = StaleUse(rawValue: 1 << 0)
    /// Served when the request could not reach the server or hear back.
    static let onNetworkFailure = StaleUse(rawValue: 1 << 1)
    /// Served in place of a `500`, `502`, `503` or `504` (`stale-if-error` only).
    static let onServerError = StaleUse(rawValue: 1 << 2)

    init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// What `policy` allows of any expired entry.
    init(policy: CachePolicy) {
        switch policy {
        case .staleWhileRevalidate: self = .whileRevalidating
        case .offlineFallback: self = .onNetworkFailure
        case .standard, .cacheOnly: self = []
        }
    }

    /// The statuses `stale-if-error` counts as errors (RFC 5861 §4).
    static let serverErrorStatusCodes: Set<Int> = [500, 502, 503, 504]
}
