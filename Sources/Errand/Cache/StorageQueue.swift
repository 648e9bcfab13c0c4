import Dispatch
import Foundation

/// The changes to a ``CacheStorage``, made one at a time off the caller's thread: an entry
/// waiting to be stored is served from `pending`, so there is no moment when a stored response
/// is neither in memory nor in the storage; an entry waiting to be deleted is a `nil` there, so
/// no lookup reads it meanwhile.
final class StorageQueue: Sendable {
    enum Lookup {
        case found(CacheEntry)
        case missing
        case unreadable
    }

    private struct State {
        var pending: [CacheKey: (entry: CacheEntry?, generation: UInt64)] = [:]
        var generation: UInt64 = 0
        /// The generation each directory was last cleared at, and each entry deleted at once its
        /// deletion is done: a read that began before must not hand back what it found. Kept
        /// while reads are under way, forgotten when none is.
        var clearings: [URL: UInt64] = [:]
        var deletions: [CacheKey: UInt64] = [:]
        var readsUnderWay = 0
        /// Directories ``markCleared(_:)`` named whose entries are not deleted yet: nothing under them is read.
        var clearingsPending: Set<URL> = []
    }

    private let state = Locked(State())
    private let writer = DispatchQueue(label: "Errand.StorageQueue.writer", qos: .utility)
    let storage: any CacheStorage
    /// `storage` when it is the disk's: its entries are read and written as they are, without
    /// the round trip through ``CachedEntry`` another storage needs.
    private let disk: DiskCacheStorage?
    /// The cache directory, which storage keys are relative to.
    private let root: CacheRoot

    /// Changes `storage`, whose keys are relative to the cache directory `root` names.
    init(storage: any CacheStorage, root: @escaping @Sendable () -> URL) {
        self.storage = storage
        self.disk = storage as? DiskCacheStorage
        self.root = CacheRoot(root)
    }

    // MARK: Reading

    /// The entry under `key`: one waiting to be written, else its file's. `keep` publishes a
    /// file's entry — to the memory layer — at the moment it is still current: a store, removal
    /// or clearing queued while the file was read wins over it, so a read that raced an
    /// invalidation cannot bring the old entry back.
    func entry(for key: CacheKey, keeping keep: (CacheEntry) -> CacheEntry = { $0 }) -> Lookup {
        let (pending, start, isCleared) = state.withLock { state in
            // Nothing under a directory being cleared is read, not even a write waiting there.
            let isCleared = state.clearingsPending.contains { key.isStored(under: $0) }
            if state.pending[key] == nil, !isCleared { state.readsUnderWay += 1 }
            return (state.pending[key], state.generation, isCleared)
        }
        if isCleared { return .missing }
        if let pending {
            return pending.entry.map(Lookup.found) ?? .missing
        }
        let found = fileEntry(for: key)
        let current = state.withLock { state -> Lookup in
            defer { Self.endRead(in: &state) }
            guard case .found(let entry) = found else { return found }
            if let change = state.pending[key], change.generation > start {
                return change.entry.map(Lookup.found) ?? .missing
            }
            let deleted = state.deletions[key].map { $0 > start } ?? false
            let cleared =
                state.clearings.contains { $0.value > start && key.isStored(under: $0.key) }
                || state.clearingsPending.contains { key.isStored(under: $0) }
            return deleted || cleared ? .missing : .found(keep(entry))
        }
        return current
    }

    private static func endRead(in state: inout State) {
        state.readsUnderWay -= 1
        guard state.readsUnderWay == 0 else { return }
        state.deletions.removeAll()
        state.clearings.removeAll()
    }

    /// The entry the storage holds for `key`, read without the lock.
    private func fileEntry(for key: CacheKey) -> Lookup {
        let storageKey = key.storageKey
        let found: CacheEntry?
        do {
            if let disk {
                found = try disk.storedEntry(for: storageKey)
            } else {
                found = try storage.entry(for: storageKey).map { cached throws(ErrandError) in
                    guard let entry = CacheEntry(cached: cached) else { throw .decoding("not an entry Errand stored") }
                    return entry
                }
            }
        } catch {
            return .unreadable
        }
        guard let entry = found else { return .missing }
        // Another request whose identity hashed to the same name: not ours to serve.
        guard entry.metadata.identityHash == key.identityHash else { return .missing }
        return .found(entry)
    }

    /// Records a use of the entry — also one served from memory — so a storage that evicts
    /// takes the least recently used.
    func noteUse(of key: CacheKey) {
        disk?.noteUse(folder: key.folder.relativePath, name: key.fileName)
    }

    /// `url`'s path relative to the cache directory, `""` for the directory itself; `nil` when
    /// it lies outside.
    private func relativePath(of url: URL) -> String? {
        let rootPath = root.url.path
        let path = url.standardizedFileURL.path
        guard CacheKey.path(path, isUnder: rootPath) else { return nil }
        return String(path.dropFirst(rootPath.count).drop { $0 == "/" })
    }

    /// The folders named `name` on the disk, when the storage is the disk's; none for another.
    func foldersOnDisk(named name: String) -> [URL] {
        disk?.folders(named: name) ?? []
    }

    // MARK: Writing

    /// Queues `entry` to be written; it is served from memory until it is on disk.
    func store(_ entry: CacheEntry, for key: CacheKey) {
        enqueue(entry, for: key)
    }

    /// Notes that everything under `directory` is about to be deleted: from now on, and for reads
    /// already under way, nothing there is found. ``apply(_:)``'s `.removeAll` then deletes it.
    func markCleared(_ directory: URL) {
        state.withLock { _ = $0.clearingsPending.insert(directory.standardizedFileURL) }
    }

    /// Queues the entry's deletion; lookups miss it from now on. Unlike ``apply(_:)``'s
    /// `.remove`, nothing waits for the file to go.
    func remove(_ key: CacheKey) {
        enqueue(nil, for: key)
    }

    /// Queues writing `entry`, or deleting the file for `nil`; the newest queued for a key is what lookups see.
    private func enqueue(_ entry: CacheEntry?, for key: CacheKey) {
        let generation = state.withLock { state in
            state.generation += 1
            state.pending[key] = (entry, state.generation)
            return state.generation
        }
        writer.async { [self] in
            if let entry {
                persist(entry, to: key)
            } else {
                delete(key)
            }
            state.withLock { state in
                if state.pending[key]?.generation == generation {
                    state.pending[key] = nil
                }
            }
        }
    }

    /// A change made after the writes already queued, which its caller waits for.
    enum Change: Sendable {
        /// Nothing: waiting for it waits until every queued write is on disk.
        case flush
        /// Delete one entry.
        case remove(CacheKey)
        /// Delete every entry under a directory.
        case removeAll(under: URL)
        /// Write an entry now.
        case store(CacheEntry, CacheKey)
    }

    /// Makes `change` after the writes already queued, blocking the calling thread until it is done.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when an entry to store cannot be written.
    func apply(_ change: Change) throws(ErrandError) {
        try writer.sync { make(change) }.get()
    }

    /// Makes `change` after the writes already queued, suspending rather than blocking the caller.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when an entry to store cannot be written.
    func apply(_ change: Change) async throws(ErrandError) {
        try await withCheckedContinuation { continuation in
            writer.async { continuation.resume(returning: self.make(change)) }
        }.get()
    }

    /// Runs on `writer`.
    private func make(_ change: Change) -> Result<Void, ErrandError> {
        switch change {
        case .flush:
            break
        case .remove(let key):
            delete(key)
            state.withLock { state in
                state.pending[key] = nil
            }
        case .removeAll(let directory):
            state.withLock { state in
                state.pending = state.pending.filter { !$0.key.isStored(under: directory) }
            }
            // A folder outside the cache directory holds no entry, and is not the cache's to delete.
            if let folder = relativePath(of: directory) { storage.removeAll(under: folder) }
            state.withLock { state in
                state.clearingsPending.remove(directory.standardizedFileURL)
                state.generation += 1
                if state.readsUnderWay > 0 { state.clearings[directory.standardizedFileURL] = state.generation }
            }
        case .store(let entry, let key):
            do throws(ErrandError) {
                try write(entry, to: key)
            } catch {
                return .failure(error)
            }
            state.withLock { state in
                state.pending[key] = nil
            }
        }
        return .success(())
    }

    /// Runs on `writer`. A read under way that began before learns of it.
    private func delete(_ key: CacheKey) {
        storage.removeEntry(for: key.storageKey)
        state.withLock { state in
            state.generation += 1
            if state.readsUnderWay > 0 { state.deletions[key] = state.generation }
        }
    }

    /// Runs on `writer`. A failed write leaves the previous entry, or none; the cache is an
    /// optimisation, so the response that was being stored is not failed for it.
    private func persist(_ entry: CacheEntry, to key: CacheKey) {
        try? write(entry, to: key)
    }

    /// Runs on `writer`.
    private func write(_ entry: CacheEntry, to key: CacheKey) throws(ErrandError) {
        let storageKey = key.storageKey
        if let disk {
            try disk.store(entry, for: storageKey)
        } else {
            try storage.store(entry.cached, for: storageKey)
        }
    }
}
