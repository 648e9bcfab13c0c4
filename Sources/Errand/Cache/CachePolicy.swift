/// What a caching request (`cacheTimeInSeconds > 0`) does when its entry is expired or the
/// network fails. Every policy serves a valid entry without touching the network, and none
/// deletes an entry for being expired: an entry stays until a successful response replaces it
/// (or the cache's size limit evicts it, or it is removed).
public enum CachePolicy: Sendable, Equatable {
    /// YTKNetwork's behaviour: a valid entry is served; otherwise the request goes to the network.
    case standard
    /// As ``standard``, and when the network fails — no connection, a timeout, a dropped
    /// connection; not a 4xx or 5xx answer — the newest entry is served even if expired,
    /// marked ``Response/isStale`` when it is, and kept.
    case offlineFallback
    /// An expired entry is served at once, marked ``Response/isStale``, and refreshed in the
    /// background — one refresh per entry at a time — so the next start gets the fresh one.
    case staleWhileRevalidate
    /// Never the network: the newest entry is served whatever its age, marked
    /// ``Response/isStale`` when expired, and kept. Without one the request fails with
    /// ``ErrandError/cacheMiss(_:)`` — `.missing`, or the mismatch that refuses the entry
    /// (`cacheVersion`, `cacheSensitiveData`, app version); a request that does not cache fails
    /// with `.cacheMiss(.disabled)`. ``NetworkConfig/isOffline`` gives every request this policy.
    case cacheOnly
}
