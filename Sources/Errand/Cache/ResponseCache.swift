import Foundation

/// The response cache an agent reads before the network and stores into after it: a memory
/// layer in front of ``StorageQueue``, and the validity rules that decide whether an entry is served.
final class ResponseCache: Sendable {
    /// What a lookup found.
    enum Lookup {
        /// A valid entry, to serve instead of the network.
        case hit(Response)
        /// No entry to serve, and why. `stale` is an expired entry that is otherwise valid, to
        /// revalidate; `uses` says when it may still be served.
        case miss(ErrandError.CacheMissReason, stale: Response?, uses: StaleUse = [])
        /// The URL's stored responses vary on the request's fields, and the lookup was not given
        /// the fields the request goes out with: which response answers it, if any, is known once
        /// the request is final.
        case varies
    }

    private let config: NetworkConfig
    private let memory: MemoryCache
    private let disk: StorageQueue
    private let revalidating = Locked(Set<CacheKey>())
    private let folders = CacheFolders()

    init(config: NetworkConfig) {
        self.config = config
        let memory = MemoryCache { [config] in config.memoryCacheSizeLimit }
        self.memory = memory
        let storage =
            config.customCacheStorage
            ?? DiskCacheStorage(
                root: { [config] in config.cacheDirectory }, sizeLimit: { [config] in config.cacheSizeLimit },
                onEvict: { memory.removeAll(at: $0) })
        self.disk = StorageQueue(storage: storage, root: { [config] in config.cacheDirectory })
    }

    /// The entry `settings` name, checked in YTKNetwork's order: missing, unreadable, expired,
    /// `cacheVersion`, `cacheSensitiveData`, app version. `allowingExpired` serves an expired
    /// entry as a hit marked stale; a mismatch still refuses it. `sent` are the header fields the
    /// request goes out with (``SentFields``), which choose among a URL's variants; without
    /// them, a URL that has variants is ``Lookup/varies``.
    /// It may read a file: call it off a caller's thread, after ``lookupInMemory(_:sending:allowingExpired:)``.
    func lookup(_ settings: CacheSettings, sending sent: [String: String]? = nil, allowingExpired: Bool = false)
        -> Lookup
    {
        judge(storedVariant(settings, sent, readsDisk: true), settings, sent, allowingExpired: allowingExpired)
            ?? .miss(.missing, stale: nil)
    }

    /// ``lookup(_:sending:allowingExpired:)`` without touching the disk: `nil` when the entry is
    /// not in memory, and only the disk can say. Cheap enough for any thread.
    func lookupInMemory(
        _ settings: CacheSettings, sending sent: [String: String]? = nil, allowingExpired: Bool = false
    ) -> Lookup? {
        judge(storedVariant(settings, sent, readsDisk: false), settings, sent, allowingExpired: allowingExpired)
    }

    private func judge(
        _ found: StoredVariant?, _ settings: CacheSettings, _ sent: [String: String]?, allowingExpired: Bool
    ) -> Lookup? {
        switch found {
        case nil: nil
        case .varies: .varies
        case .entry(.missing, _): .miss(.missing, stale: nil)
        case .entry(.unreadable, _): .miss(.unreadable, stale: nil)
        case .entry(.found(let entry), _): judge(entry, settings, sent, allowingExpired: allowingExpired)
        }
    }

    /// What a lookup found: an entry, or the marker of variants it was given no fields to choose by.
    private enum StoredVariant {
        case entry(StorageQueue.Lookup, CacheKey)
        case varies
    }

    /// What answers `settings`, and under which key: the entry under its key, or — where that is
    /// the marker of its URL's variants — the entry of the variant the `sent` fields select.
    /// `nil` when only the disk can say and `readsDisk` is `false`.
    private func storedVariant(_ settings: CacheSettings, _ sent: [String: String]?, readsDisk: Bool)
        -> StoredVariant?
    {
        guard let found = stored(settings.key, readsDisk: readsDisk) else { return nil }
        guard case .found(let entry) = found, let variants = entry.metadata.variants else {
            return .entry(found, settings.key)
        }
        guard let sent else { return .varies }
        let key = Self.variantKey(settings, variants, sent)
        return stored(key, readsDisk: readsDisk).map { .entry($0, key) }
    }

    /// The entry under `key`, from memory, else from disk with `readsDisk`; `nil` when only the disk can say.
    private func stored(_ key: CacheKey, readsDisk: Bool) -> StorageQueue.Lookup? {
        if let entry = memory.entry(for: key) {
            disk.noteUse(of: key)
            return .found(entry)
        }
        guard readsDisk else { return nil }
        // A store that raced this read is newer than the file: the memory layer keeps it.
        return disk.entry(for: key) { memory.insertIfAbsent($0, for: key) }
    }

    /// The key of the variant a request sending `sent` selects among `variants`.
    private static func variantKey(_ settings: CacheSettings, _ variants: CacheEntry.Variants, _ sent: [String: String])
        -> CacheKey
    {
        let values = HTTPStorageRules.variant(vary: variants.names.joined(separator: ","), requestHeaders: sent)
        return settings.key.variant(id: variants.id, values: values ?? [:])
    }

    /// What `entry` is worth for `settings`, by the rules of ``lookup(_:sending:allowingExpired:)``.
    private func judge(_ entry: CacheEntry, _ settings: CacheSettings, _ sent: [String: String]?, allowingExpired: Bool)
        -> Lookup
    {
        if settings.followsHTTPCaching {
            let headers = sent ?? settings.requestHeaders
            let found = judgeByHTTP(entry, settings, headers, allowingExpired: allowingExpired)
            guard case .hit(let response) = found else { return found }
            return .hit(ByteRangeAnswer.answer(headers, from: response))
        }
        let mismatch = mismatch(of: entry.metadata, for: settings)
        let age = config.cacheClock().timeIntervalSince1970 - entry.metadata.storedAt
        // A negative age means the clock moved back; the entry's age is unknown, so it is not trusted.
        let isExpired = age < 0 || age > Double(settings.lifetime)
        if let mismatch, allowingExpired || !isExpired { return .miss(mismatch, stale: nil) }
        if isExpired {
            let stale = mismatch == nil ? entry.response(isStale: true, age: max(0, age)) : nil
            if allowingExpired, let stale { return .hit(stale) }
            return .miss(.expired, stale: stale, uses: StaleUse(policy: settings.policy))
        }
        return .hit(entry.response(isStale: false, age: age))
    }

    /// What `entry` is worth as a private HTTP cache judges it (RFC 9111 §4): another variant is
    /// no entry; fresh by the server's lifetime (or `cacheTimeInSeconds`) and the request's
    /// directives, a hit with its `Age`; stale, a hit only within the request's `max-stale`, and
    /// otherwise the expired entry to revalidate, with the uses the server and the policy allow.
    private func judgeByHTTP(
        _ entry: CacheEntry, _ settings: CacheSettings, _ sent: [String: String], allowingExpired: Bool
    ) -> Lookup {
        // The entry is a GET's, which answers a HEAD too (§4.3.5), and no other method.
        guard settings.method == "GET" || settings.method == "HEAD" else { return .miss(.missing, stale: nil) }
        let metadata = entry.metadata
        if let mismatch = mismatch(of: metadata, for: settings) { return .miss(mismatch, stale: nil) }
        // An entry saved without a variant, by saveCache or before the request followed HTTP caching, varies on nothing.
        guard HTTPStorageRules.matches(metadata.variant ?? [:], requestHeaders: sent) else {
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
        let isFresh = age < lifetime
        let requestValidates = Self.requestValidates(
            settings.requestCacheControl, age: age, lifetime: lifetime,
            immutable: isFresh && stored.contains("immutable"))
        // The server's no-cache binds every use, must-revalidate every use once stale (§5.2.2); a
        // no-cache that lists fields only kept those fields out of the entry.
        let forbidsStale = stored.containsUnqualified("no-cache") || !isFresh && stored.contains("must-revalidate")
        let isHead = settings.method == "HEAD"
        if isFresh, !forbidsStale, !requestValidates {
            return .hit(entry.response(isStale: false, age: age, ageField: true, withoutBody: isHead))
        }
        let stale = entry.response(isStale: true, age: age, ageField: true, withoutBody: isHead)
        if forbidsStale { return .miss(.expired, stale: stale) }
        if allowingExpired { return .hit(stale) }
        if !requestValidates, Self.maxStaleAccepts(settings.requestCacheControl, staleness: age - lifetime) {
            return .hit(stale)
        }
        return .miss(
            .expired, stale: stale, uses: staleUses(stored, staleness: age - lifetime, settings, requestValidates))
    }

    /// Whether the request's `max-stale` accepts an entry `staleness` seconds stale: any, without a value.
    private static func maxStaleAccepts(_ request: CacheControl, staleness: TimeInterval) -> Bool {
        guard let maxStale = request.seconds("max-stale") else { return false }
        return request.argument(of: "max-stale") == nil || staleness <= TimeInterval(maxStale)
    }

    /// Whether the request's own directives send an entry `age` seconds old to the server first:
    /// `no-cache`, or a `max-age` or `min-fresh` it does not meet. A fresh `immutable` entry
    /// ignores `max-age`, which is how a reload asks (RFC 8246 §2).
    private static func requestValidates(
        _ request: CacheControl, age: TimeInterval, lifetime: TimeInterval, immutable: Bool
    ) -> Bool {
        if request.contains("no-cache") { return true }
        if !immutable, let maxAge = request.seconds("max-age"), age > TimeInterval(maxAge) { return true }
        return request.seconds("min-fresh").map { lifetime - age < TimeInterval($0) } == true
    }

    /// When a stale HTTP entry may be served all the same: as the policy allows, and as the
    /// server's `stale-while-revalidate` and `stale-if-error` windows do — the first not for a
    /// request that asked for validation itself.
    private func staleUses(
        _ stored: CacheControl, staleness: TimeInterval, _ settings: CacheSettings, _ requestValidates: Bool
    ) -> StaleUse {
        var uses = StaleUse(policy: settings.policy)
        if let window = stored.seconds("stale-while-revalidate"), staleness <= TimeInterval(window) {
            uses.insert(.whileRevalidating)
        }
        if requestValidates { uses.remove(.whileRevalidating) }
        if let window = stored.seconds("stale-if-error"), staleness <= TimeInterval(window) {
            uses.formUnion([.onNetworkFailure, .onServerError])
        }
        return uses
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
    /// A request that follows HTTP caching stores only what RFC 9111 allows, as the variant its
    /// `sent` header fields select (``HTTPStorageRules/selectingFields(vary:response:requestHeaders:)``),
    /// with `sentAt`, when it was sent.
    func store(_ response: Response, as settings: CacheSettings, sentAt: Date? = nil, sending sent: [String: String]) {
        guard settings.followsHTTPCaching else {
            return keep(entry(response, as: settings), under: settings.key, for: settings)
        }
        invalidate(after: response, settings)
        if settings.method == "HEAD" { return freshen(with: response, settings, sentAt: sentAt, sent) }
        let control = CacheControl(response.value(forHeader: "Cache-Control"))
        let allowed = HTTPStorageRules.mayStore(
            method: settings.method, statusCode: response.statusCode, request: settings.requestCacheControl,
            response: control, responseHeaders: response.headers)
        let selecting = HTTPStorageRules.selectingFields(
            vary: response.value(forHeader: "Vary"), response: control, requestHeaders: sent)
        guard allowed, !replacesWithServerError(response, settings),
            let variant = HTTPStorageRules.variant(vary: selecting, requestHeaders: sent)
        else { return }
        let key = variant.isEmpty ? settings.key : variantKey(storing: variant, settings)
        keep(
            entry(response, as: settings, under: key, requestTime: sentAt, variant: variant), under: key, for: settings)
    }

    /// Whether `response` is a server error that would replace a stored response: RFC 9111
    /// allows storing it, but an entry is never traded for a failure, which `stale-if-error`
    /// and offline fallback may still need it to stand in for.
    private func replacesWithServerError(_ response: Response, _ settings: CacheSettings) -> Bool {
        guard response.statusCode >= 500, case .found = stored(settings.key, readsDisk: true) else { return false }
        return true
    }

    /// Removes the entry under `key`: from disk first, so that a read of its file already under
    /// way cannot put it back in memory after memory let it go.
    private func forget(_ key: CacheKey) {
        disk.remove(key)
        memory.remove(key)
    }

    /// Puts `entry` in memory at once, and on disk shortly after — unless its folder was cleared
    /// after `settings` were taken: a request started before a clearing (an account's sign-out)
    /// brings nothing back into the folder.
    private func keep(_ entry: CacheEntry, under key: CacheKey, for settings: CacheSettings) {
        folders.admit(key, since: settings.epoch) {
            memory.insert(entry, for: key)
            disk.store(entry, for: key)
        }
    }

    /// The folders named `name` (``AccountCacheDirPathFilter``'s `account-<id>`) wherever the
    /// filters put them: in `inUse`, the folders of requests in flight, in those this cache
    /// stored entries in, and on the disk for the default storage; `name` right under the cache
    /// directory always, where it is without other filters.
    func folders(named name: String, inUse: [URL]) -> [URL] {
        folders.named(name, under: config.cacheDirectory, among: inUse + disk.foldersOnDisk(named: name))
    }

    /// The key a response that varies on `variant`'s fields is stored under: one of the variants
    /// the URL's marker names, or of a new marker's when there is none or it names other fields.
    private func variantKey(storing variant: [String: String?], _ settings: CacheSettings) -> CacheKey {
        let names = variant.keys.sorted()
        if case .found(let entry) = stored(settings.key, readsDisk: true), let variants = entry.metadata.variants,
            variants.names == names
        {
            return settings.key.variant(id: variants.id, values: variant)
        }
        let variants = CacheEntry.Variants(names: names, id: UUID().uuidString)
        keep(
            CacheEntry(
                variants: variants, key: settings.key, appVersion: config.appVersion, storedAt: config.cacheClock()),
            under: settings.key, for: settings)
        return settings.key.variant(id: variants.id, values: variant)
    }

    /// Forgets the entries an answer to an unsafe method made wrong, in memory and on disk (§4.4).
    private func invalidate(after response: Response, _ settings: CacheSettings) {
        guard let targetURI = settings.targetURI else { return }
        let uris = Invalidation.uris(
            method: settings.method, statusCode: response.statusCode, targetURI: targetURI,
            responseHeaders: response.headers)
        for uri in uris { forget(CacheKey(targetURI: uri, folder: settings.key.folder)) }
    }

    /// Updates the stored `GET` a `200` to a `HEAD` describes, as a `304` would; one it shows
    /// changed is no longer trusted, and goes (§4.3.5). A `HEAD` answer is never stored itself:
    /// it has no body to serve a `GET`.
    private func freshen(with head: Response, _ settings: CacheSettings, sentAt: Date?, _ sent: [String: String]) {
        guard head.statusCode == 200,
            case .entry(.found(let described), let key)? = storedVariant(settings, sent, readsDisk: true),
            HTTPStorageRules.matches(described.metadata.variant ?? [:], requestHeaders: sent),
            // Another version's or account's entry is not this request's to relabel.
            mismatch(of: described.metadata, for: settings) == nil
        else { return }
        let stored = described.response(isStale: false, age: 0)
        guard Revalidation.describesSameBody(head, as: stored) else { return forget(key) }
        let merged = Revalidation.merged(stored, with: head)
        keep(
            entry(merged, as: settings, under: key, requestTime: sentAt, variant: described.metadata.variant),
            under: key, for: settings)
    }

    /// The change that stores `response` as the entry `settings` name, for ``apply(_:)``.
    func storing(_ response: Response, as settings: CacheSettings) -> StorageQueue.Change {
        .store(entry(response, as: settings), settings.key)
    }

    /// Makes `change` after the writes already queued, blocking the calling thread until it is
    /// on disk. Memory forgets what it deletes at once, and keeps what it stores once written.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when an entry to store cannot be written; memory
    ///   keeps nothing then.
    func apply(_ change: StorageQueue.Change) throws(ErrandError) {
        let change = forgettingInMemory(change)
        try disk.apply(change)
        keepInMemory(change)
    }

    /// ``apply(_:)`` for an `async` caller, whose thread it never blocks.
    func apply(_ change: StorageQueue.Change) async throws(ErrandError) {
        let change = forgettingInMemory(change)
        try await disk.apply(change)
        keepInMemory(change)
    }

    /// `change`, with what it deletes already gone from memory — and already missed on disk, so
    /// that no read under way brings it back; what is left for the writer to do.
    private func forgettingInMemory(_ change: StorageQueue.Change) -> StorageQueue.Change {
        switch change {
        case .remove(let key):
            forget(key)
            // The deletion is queued: waiting for the writer waits for it.
            return .flush
        case .removeAll(let directory):
            let directory = directory.standardizedFileURL
            folders.clear(directory) {
                disk.markCleared(directory)
                memory.removeAll(at: directory)
            }
            return .removeAll(under: directory)
        case .flush, .store:
            return change
        }
    }

    private func keepInMemory(_ change: StorageQueue.Change) {
        if case .store(let entry, let key) = change { memory.insert(entry, for: key) }
    }

    /// The entry of `response` under `key`, by default the one `settings` name.
    private func entry(
        _ response: Response, as settings: CacheSettings, under key: CacheKey? = nil, requestTime: Date? = nil,
        variant: [String: String?]? = nil
    ) -> CacheEntry {
        let key = key ?? settings.key
        // A body stored again unchanged, as after a 304, keeps its hash: comparing the bytes is a
        // memcmp, hashing them byte by byte takes a tenth of a millisecond per 100 KiB.
        let known = memory.entry(for: key).flatMap { $0.body == response.data ? $0.metadata.bodyHash : nil }
        return CacheEntry(
            response: response, key: key, settings: settings, appVersion: config.appVersion,
            storedAt: config.cacheClock(), bodyHash: known, requestTime: requestTime, variant: variant)
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
