import Foundation

/// The response cache an agent reads before the network and stores into after it: a memory
/// layer in front of ``DiskCache``, and the validity rules that decide whether an entry is served.
final class ResponseCache: Sendable {
    /// What a lookup found.
    enum Lookup {
        /// A valid entry, to serve instead of the network.
        case hit(Response)
        /// No entry to serve, and why. `stale` is an expired entry that is otherwise valid — what
        /// offline fallback and stale-while-revalidate may still serve.
        case miss(ErrandError.CacheMissReason, stale: Response?)
    }

    private let config: NetworkConfig
    private let memory: MemoryCache
    private let disk: DiskCache
    private let revalidating = Locked(Set<CacheKey>())

    init(config: NetworkConfig) {
        self.config = config
        let memory = MemoryCache { [config] in config.memoryCacheSizeLimit }
        self.memory = memory
        self.disk = DiskCache(sizeLimit: { [config] in config.cacheSizeLimit }, onEvict: { memory.removeAll(at: $0) })
    }

    /// The key `request` is cached under; `nil` when it does not cache (`cacheTimeInSeconds <= 0`, or a download).
    /// - Throws: ``ErrandError/serialization(_:)`` when its `cacheKeyArguments` cannot be encoded.
    func key(for request: any BaseRequest) throws(ErrandError) -> CacheKey? {
        guard request.cacheTimeInSeconds > 0, request.resumableDownloadPath == nil else { return nil }
        return try CacheKey(request: request, config: config)
    }

    /// The entry for `request`, checked in YTKNetwork's order: disabled, missing, unreadable,
    /// expired, `cacheVersion`, `cacheSensitiveData`, app version.
    func lookup(_ request: any BaseRequest) throws(ErrandError) -> Lookup {
        guard let key = try key(for: request) else { return .miss(.disabled, stale: nil) }
        return lookup(request, key: key)
    }

    func lookup(_ request: any BaseRequest, key: CacheKey) -> Lookup {
        let entry: CacheEntry
        if let remembered = memory.entry(for: key) {
            disk.noteUse(of: key)
            entry = remembered
        } else {
            switch disk.entry(for: key) {
            case .missing: return .miss(.missing, stale: nil)
            case .unreadable: return .miss(.unreadable, stale: nil)
            case .found(let found):
                // A store that raced this read is newer than the file: keep it.
                entry = memory.insertIfAbsent(found, for: key)
            }
        }
        let mismatch = mismatch(of: entry.metadata, for: request)
        let age = config.cacheClock().timeIntervalSince1970 - entry.metadata.storedAt
        // A negative age means the clock moved back; the entry's age is unknown, so it is not trusted.
        if age < 0 || age > Double(request.cacheTimeInSeconds) {
            return .miss(.expired, stale: mismatch == nil ? entry.response(isStale: true) : nil)
        }
        if let mismatch { return .miss(mismatch, stale: nil) }
        return .hit(entry.response(isStale: false))
    }

    private func mismatch(of metadata: CacheEntry.Metadata, for request: any BaseRequest)
        -> ErrandError.CacheMissReason?
    {
        if metadata.cacheVersion != request.cacheVersion { return .versionMismatch }
        if metadata.sensitiveDataHash != CacheEntry.hash(ofSensitiveData: request.cacheSensitiveData) {
            return .sensitiveDataMismatch
        }
        if metadata.appVersion != config.appVersion { return .appVersionMismatch }
        return nil
    }

    /// Keeps `response` as the entry for `request`: in memory at once, on disk shortly after.
    func store(_ response: Response, for request: any BaseRequest, key: CacheKey) {
        let entry = CacheEntry(
            response: response, key: key, request: request, appVersion: config.appVersion,
            storedAt: config.cacheClock())
        memory.insert(entry, for: key)
        disk.store(entry, for: key)
    }

    func remove(_ key: CacheKey) {
        memory.remove(key)
        disk.remove(key)
    }

    func removeAll(under directory: URL) {
        let directory = directory.standardizedFileURL
        memory.removeAll(at: directory)
        disk.removeAll(under: directory)
    }

    /// Waits until every stored entry is on disk.
    func flush() {
        disk.flush()
    }

    // MARK: Revalidation

    /// Claims the one background refresh `key` may have; `false` when one is already running.
    func beginRevalidation(_ key: CacheKey) -> Bool {
        revalidating.withLock { $0.insert(key).inserted }
    }

    func endRevalidation(_ key: CacheKey) {
        revalidating.withLock { _ = $0.remove(key) }
    }
}
