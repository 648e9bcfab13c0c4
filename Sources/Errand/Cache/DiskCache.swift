import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Cache files on disk: written off the caller's thread, each replaced atomically, and kept
/// under a size limit per directory by evicting the least recently used.
///
/// An entry waiting to be written is served from `pending`, so there is no moment when a
/// stored response is neither in memory nor on disk.
final class DiskCache: Sendable {
    enum Lookup {
        case found(CacheEntry)
        case missing
        case unreadable
    }

    private struct FileRecord {
        var size: Int
        var lastUse: UInt64
    }

    /// The files of one directory, loaded on its first write, for eviction.
    private struct DirectoryIndex {
        var files: [String: FileRecord] = [:]
        var totalSize = 0
    }

    private struct State {
        var pending: [CacheKey: (entry: CacheEntry, generation: UInt64)] = [:]
        var generation: UInt64 = 0
        var indexes: [URL: DirectoryIndex] = [:]
        var useClock: UInt64 = 0
    }

    private let state = Locked(State())
    private let writer = DispatchQueue(label: "Errand.DiskCache.writer", qos: .utility)
    private let sizeLimit: @Sendable () -> Int
    private let onEvict: @Sendable (URL) -> Void

    /// `sizeLimit` is read at each write; `onEvict` is told each file evicted, to drop it from memory too.
    init(sizeLimit: @escaping @Sendable () -> Int, onEvict: @escaping @Sendable (URL) -> Void) {
        self.sizeLimit = sizeLimit
        self.onEvict = onEvict
    }

    // MARK: Reading

    func entry(for key: CacheKey) -> Lookup {
        if let pending = state.withLock({ $0.pending[key]?.entry }) {
            return .found(pending)
        }
        let url = key.fileURL
        let file: Data
        do {
            file = try Data(contentsOf: url)
        } catch {
            // Judged by the error, not by looking again: the file may appear in between.
            return (error as? CocoaError)?.code == .fileReadNoSuchFile ? .missing : .unreadable
        }
        guard let entry = CacheEntry(file: file) else { return .unreadable }
        // Another request whose identity hashed to the same name: not ours to serve.
        guard entry.metadata.identityHash == key.identityHash else { return .missing }
        noteUse(of: key)
        // The modification date carries the use over to the next process's eviction order.
        writer.async {
            _ = utimes(url.path, nil)
        }
        return .found(entry)
    }

    /// Records a use of the entry — also one served from memory — so eviction takes the least recently used.
    func noteUse(of key: CacheKey) {
        state.withLock { state in
            state.useClock += 1
            state.indexes[key.directory]?.files[key.fileName]?.lastUse = state.useClock
        }
    }

    // MARK: Writing

    /// Queues `entry` to be written; it is served from memory until it is on disk.
    func store(_ entry: CacheEntry, for key: CacheKey) {
        let generation = state.withLock { state in
            state.generation += 1
            state.pending[key] = (entry, state.generation)
            return state.generation
        }
        writer.async { [self] in
            persist(entry, to: key)
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
            state.withLock { state in
                state.pending[key] = nil
                forget(key.fileURL, in: &state)
            }
            try? FileManager.default.removeItem(at: key.fileURL)
        case .removeAll(let directory):
            state.withLock { state in
                state.pending = state.pending.filter { !$0.key.isStored(under: directory) }
                state.indexes = state.indexes.filter { !CacheKey.path($0.key.path, isUnder: directory.path) }
            }
            try? FileManager.default.removeItem(at: directory)
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

    /// Runs on `writer`. A failed write leaves the previous entry, or none; the cache is an
    /// optimisation, so the response that was being stored is not failed for it.
    private func persist(_ entry: CacheEntry, to key: CacheKey) {
        try? write(entry, to: key)
    }

    /// Runs on `writer`: writes the entry's file, then evicts what the folder's size limit requires.
    private func write(_ entry: CacheEntry, to key: CacheKey) throws(ErrandError) {
        let file = entry.encoded()
        try OwnerOnlyFile.write(file, to: key.fileURL, creatingDirectory: true)
        // The first write to a folder lists it, outside the lock that every lookup takes.
        let scanned = state.withLock { $0.indexes[key.directory] } == nil ? Self.scan(key.directory) : nil
        let evicted = state.withLock { state -> [URL] in
            if state.indexes[key.directory] == nil, let scanned {
                state.indexes[key.directory] = Self.index(of: scanned, clock: &state.useClock)
            }
            forget(key.fileURL, in: &state)
            state.useClock += 1
            state.indexes[key.directory]?.files[key.fileName] = FileRecord(size: file.count, lastUse: state.useClock)
            state.indexes[key.directory]?.totalSize += file.count
            return evictions(in: key.directory, state: &state)
        }
        for url in evicted {
            try? FileManager.default.removeItem(at: url)
            onEvict(url)
        }
    }

    private func evictions(in directory: URL, state: inout State) -> [URL] {
        let limit = sizeLimit()
        guard var index = state.indexes[directory], limit > 0, index.totalSize > limit else { return [] }
        var evicted: [URL] = []
        for (name, record) in index.files.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard index.totalSize > limit else { break }
            index.files[name] = nil
            index.totalSize -= record.size
            evicted.append(directory.appendingPathComponent(name, isDirectory: false))
        }
        state.indexes[directory] = index
        return evicted
    }

    private func forget(_ fileURL: URL, in state: inout State) {
        let directory = fileURL.deletingLastPathComponent()
        if let removed = state.indexes[directory]?.files.removeValue(forKey: fileURL.lastPathComponent) {
            state.indexes[directory]?.totalSize -= removed.size
        }
    }

    // MARK: Files

    /// Entry files by size and, as the order of last use, modification date, oldest first;
    /// leftovers of writes a crash interrupted long ago are deleted.
    private static func scan(_ directory: URL) -> [(name: String, size: Int, modified: Date)] {
        let keys: [URLResourceKey] = [.fileSizeKey, .contentModificationDateKey]
        let urls =
            (try? FileManager.default.contentsOfDirectory(
                at: directory, includingPropertiesForKeys: keys, options: [])) ?? []
        var found: [(name: String, size: Int, modified: Date)] = []
        for url in urls {
            guard let values = try? url.resourceValues(forKeys: Set(keys)) else { continue }
            let modified = values.contentModificationDate ?? .distantPast
            // Another writer's file in progress is seconds old at most; an older one was left by a crash.
            if url.lastPathComponent.hasSuffix(OwnerOnlyFile.temporarySuffix) && modified.timeIntervalSinceNow < -600 {
                try? FileManager.default.removeItem(at: url)
                continue
            }
            guard url.pathExtension == "cache" else { continue }
            found.append((url.lastPathComponent, values.fileSize ?? 0, modified))
        }
        return found.sorted { $0.modified < $1.modified }
    }

    private static func index(of files: [(name: String, size: Int, modified: Date)], clock: inout UInt64)
        -> DirectoryIndex
    {
        var index = DirectoryIndex()
        for file in files {
            clock += 1
            index.files[file.name] = FileRecord(size: file.size, lastUse: clock)
            index.totalSize += file.size
        }
        return index
    }
}
