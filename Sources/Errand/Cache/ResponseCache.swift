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

    /// The entry `settings` name, checked in YTKNetwork's order: missing, unreadable, expired,
    /// `cacheVersion`, `cacheSensitiveData`, app version. `allowingExpired` serves an expired
    /// entry as a hit marked stale; a mismatch still refuses it.
    /// It may read a file: call it off a caller's thread, after ``lookupInMemory(_:allowingExpired:)``.
    func lookup(_ settings: CacheSettings, allowingExpired: Bool = false) -> Lookup {
        if let found = lookupInMemory(settings, allowingExpired: allowingExpired) { return found }
        switch disk.entry(for: settings.key) {
        case .missing: return .miss(.missing, stale: nil)
        case .unreadable: return .miss(.unreadable, stale: nil)
        case .found(let found):
            // A store that raced this read is newer than the file: keep it.
            let entry = memory.insertIfAbsent(found, for: settings.key)
            return judge(entry, settings, allowingExpired: allowingExpired)
        }
    }

    /// ``lookup(_:allowingExpired:)`` without touching the disk: `nil` when the entry is not in
    /// memory, and only the disk can say. Cheap enough for any thread.
    func lookupInMemory(_ settings: CacheSettings, allowingExpired: Bool = false) -> Lookup? {
        guard let entry = memory.entry(for: settings.key) else { return nil }
        disk.noteUse(of: settings.key)
        return judge(entry, settings, allowingExpired: allowingExpired)
    }

    /// What `entry` is worth for `settings`, by the rules of ``lookup(_:allowingExpired:)``.
    private func judge(_ entry: CacheEntry, _ settings: CacheSettings, allowingExpired: Bool) -> Lookup {
        if settings.followsHTTPCaching { return judgeByHTTP(entry, settings, allowingExpired: allowingExpired) }
        let mismatch = mismatch(of: entry.metadata, for: settings)
        let age = config.cacheClock().timeIntervalSince1970 - entry.metadata.storedAt
        // A negative age means the clock moved back; the entry's age is unknown, so it is not trusted.
        let isExpired = age < 0 || age > Double(settings.lifetime)
        if let mismatch, allowingExpired || !isExpired { return .miss(mismatch, stale: nil) }
        if isExpired {
            let stale = mismatch == nil ? entry.response(isStale: true, age: max(0, age)) : nil
            if allowingExpired, let stale { return .hit(stale) }
            return .miss(.expired, stale: stale)
        }
        return .hit(entry.response(isStale: false, age: age))
    }

    /// What `entry` is worth as a private HTTP cache judges it (RFC 9111 §4): another variant is
    /// no entry; fresh by the server's lifetime (or `cacheTimeInSeconds`) and the request's
    /// directives, a hit with its `Age`; stale, a hit only within the request's `max-stale`, and
    /// otherwise the expired entry to revalidate.
    private func judgeByHTTP(_ entry: CacheEntry, _ settings: CacheSettings, allowingExpired: Bool) -> Lookup {
        let metadata = entry.metadata
        if let mismatch = mismatch(of: metadata, for: settings) { return .miss(mismatch, stale: nil) }
        // An entry saved without a variant, by saveCache or before the request followed HTTP caching, varies on nothing.
        guard HTTPStorageRules.matches(metadata.variant ?? [:], requestHeaders: settings.requestHeaders) else {
            return .miss(.missing, stale: nil)
        }
        let storedAt = Date(timeIntervalSince1970: metadata.storedAt)
        let freshness = ResponseFreshness(
            statusCode: metadata.statusCode, headers: metadata.headers,
            requestTime: metadata.requestTime.map(Date.init(timeIntervalSince1970:)) ?? storedAt, responseTime: storedAt
        )
        let lifetime = settings.lifetime > 0 ? TimeInterval(settings.lifetime) : freshness.lifetime
        let age = freshness.age(at: config.cacheClock())
        let stored = CacheControl(metadata.headers.headerField("Cache-Control"))
        let request = settings.requestCacheControl
        let mustValidate =
            stored.contains("no-cache") || request.contains("no-cache")
            || request.seconds("max-age").map { age > TimeInterval($0) } == true
            || request.seconds("min-fresh").map { lifetime - age < TimeInterval($0) } == true
        if !mustValidate, age < lifetime { return .hit(entry.response(isStale: false, age: age, ageField: true)) }
        let stale = entry.response(isStale: true, age: age, ageField: true)
        if allowingExpired { return .hit(stale) }
        // max-stale without a value accepts any staleness; must-revalidate and no-cache accept none.
        if !mustValidate, !stored.contains("must-revalidate"), let maxStale = request.seconds("max-stale") {
            let accepted = request.argument(of: "max-stale") == nil ? .infinity : TimeInterval(maxStale)
            if age - lifetime <= accepted { return .hit(stale) }
        }
        return .miss(.expired, stale: stale)
    }

    private func mismatch(of metadata: CacheEntry.Metadata, for settings: CacheSettings)
        -> ErrandError.CacheMissReason?
    {
        if metadata.cacheVersion != settings.version { return .versionMismatch }
        if metadata.sensitiveDataHash != settings.sensitiveDataHash { return .sensitiveDataMismatch }
        if metadata.appVersion != config.appVersion { return .appVersionMismatch }
        return nil
    }

    /// Keeps `response` as the entry `settings` name: in memory at once, on disk shortly after.
    /// A request that follows HTTP caching stores only what RFC 9111 allows, with the request's
    /// `Vary` variant and `sentAt`, when it was sent.
    func store(_ response: Response, as settings: CacheSettings, sentAt: Date? = nil) {
        var variant: [String: String?]?
        if settings.followsHTTPCaching {
            let allowed = HTTPStorageRules.mayStore(
                method: settings.method, statusCode: response.statusCode, request: settings.requestCacheControl,
                response: CacheControl(response.value(forHeader: "Cache-Control")), responseHeaders: response.headers)
            guard allowed,
                let selected = HTTPStorageRules.variant(
                    vary: response.value(forHeader: "Vary"), requestHeaders: settings.requestHeaders)
            else { return }
            variant = selected
        }
        let entry = entry(response, as: settings, requestTime: sentAt, variant: variant)
        memory.insert(entry, for: settings.key)
        disk.store(entry, for: settings.key)
    }

    /// The change that stores `response` as the entry `settings` name, for ``apply(_:)``.
    func storing(_ response: Response, as settings: CacheSettings) -> DiskCache.Change {
        .store(entry(response, as: settings), settings.key)
    }

    /// Makes `change` after the writes already queued, blocking the calling thread until it is
    /// on disk. Memory forgets what it deletes at once, and keeps what it stores once written.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when an entry to store cannot be written; memory
    ///   keeps nothing then.
    func apply(_ change: DiskCache.Change) throws(ErrandError) {
        let change = forgettingInMemory(change)
        try disk.apply(change)
        keepInMemory(change)
    }

    /// ``apply(_:)`` for an `async` caller, whose thread it never blocks.
    func apply(_ change: DiskCache.Change) async throws(ErrandError) {
        let change = forgettingInMemory(change)
        try await disk.apply(change)
        keepInMemory(change)
    }

    /// `change`, with what it deletes already gone from memory.
    private func forgettingInMemory(_ change: DiskCache.Change) -> DiskCache.Change {
        switch change {
        case .remove(let key):
            memory.remove(key)
            return change
        case .removeAll(let directory):
            let directory = directory.standardizedFileURL
            memory.removeAll(at: directory)
            return .removeAll(under: directory)
        case .flush, .store:
            return change
        }
    }

    private func keepInMemory(_ change: DiskCache.Change) {
        if case .store(let entry, let key) = change { memory.insert(entry, for: key) }
    }

    private func entry(
        _ response: Response, as settings: CacheSettings, requestTime: Date? = nil, variant: [String: String?]? = nil
    ) -> CacheEntry {
        // A body stored again unchanged, as after a 304, keeps its hash: comparing the bytes is a
        // memcmp, hashing them byte by byte takes a tenth of a millisecond per 100 KiB.
        let known = memory.entry(for: settings.key).flatMap { $0.body == response.data ? $0.metadata.bodyHash : nil }
        return CacheEntry(
            response: response, settings: settings, appVersion: config.appVersion, storedAt: config.cacheClock(),
            bodyHash: known, requestTime: requestTime, variant: variant)
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
