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

    private func mismatch(of metadata: CacheEntry.Metadata, for settings: CacheSettings)
        -> ErrandError.CacheMissReason?
    {
        if metadata.cacheVersion != settings.version { return .versionMismatch }
        if metadata.sensitiveDataHash != settings.sensitiveDataHash { return .sensitiveDataMismatch }
        if metadata.appVersion != config.appVersion { return .appVersionMismatch }
        return nil
    }

    /// Keeps `response` as the entry `settings` name: in memory at once, on disk shortly after.
    func store(_ response: Response, as settings: CacheSettings) {
        let entry = entry(response, as: settings)
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

    private func entry(_ response: Response, as settings: CacheSettings) -> CacheEntry {
        // A body stored again unchanged, as after a 304, keeps its hash: comparing the bytes is a
        // memcmp, hashing them byte by byte takes a tenth of a millisecond per 100 KiB.
        let known = memory.entry(for: settings.key).flatMap { $0.body == response.data ? $0.metadata.bodyHash : nil }
        return CacheEntry(
            response: response, settings: settings, appVersion: config.appVersion, storedAt: config.cacheClock(),
            bodyHash: known)
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
