import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The default ``CacheStorage``: one file per entry under a cache directory, replaced
/// atomically and readable by its owner only, each folder kept under a size limit by evicting
/// the least recently used entries.
///
/// A file holds the entry's metadata and body together, with the body's length and hash, so a
/// truncated or corrupted file is found unreadable rather than served. Wrap it to add what it
/// lacks, such as encryption, by storing your own ``CachedEntry`` built from the one given.
public final class DiskCacheStorage: CacheStorage {
    private struct FileRecord {
        var size: Int
        var lastUse: UInt64
    }

    /// The files of one folder, listed on its first write, for eviction.
    private struct FolderIndex {
        var files: [String: FileRecord] = [:]
        var totalSize = 0
    }

    private struct State {
        /// By folder, as keys name it.
        var indexes: [String: FolderIndex] = [:]
        var useClock: UInt64 = 0
    }

    private let state = Locked(State())
    /// Where files read are marked as used.
    private let touching = DispatchQueue(label: "Errand.DiskCacheStorage.touch", qos: .utility)
    private let root: CacheRoot
    private let sizeLimit: @Sendable () -> Int
    private let onEvict: @Sendable (URL) -> Void

    /// A storage under `directory`, each folder in it kept within `sizeLimit` bytes.
    /// - Parameters:
    ///   - directory: Where the files go; folders are made as needed.
    ///   - sizeLimit: Bytes of entries per folder; past it, the least recently used go. `0` or
    ///     less: no limit.
    public convenience init(directory: URL, sizeLimit: Int) {
        let directory = directory.standardizedFileURL
        self.init(root: { directory }, sizeLimit: { sizeLimit }, onEvict: { _ in })
    }

    /// A storage under the cache directory `root` names at each call, whose size limit
    /// `sizeLimit` gives at each write; `onEvict` is told each file evicted.
    init(
        root: @escaping @Sendable () -> URL, sizeLimit: @escaping @Sendable () -> Int,
        onEvict: @escaping @Sendable (URL) -> Void
    ) {
        self.root = CacheRoot(root)
        self.sizeLimit = sizeLimit
        self.onEvict = onEvict
    }

    /// The file of `key`; `nil` for a key that would leave the directory.
    func fileURL(for key: String) -> URL? {
        let components = key.split(separator: "/", omittingEmptySubsequences: false)
        guard !key.isEmpty, !key.contains("\0"),
            !components.contains(where: { $0.isEmpty || $0 == ".." || $0 == "." })
        else { return nil }
        return root.url.appendingPathComponent(key, isDirectory: false)
    }

    /// `key`'s folder (`""` for the cache directory's own entries) and file name.
    private static func split(_ key: String) -> (folder: String, name: String) {
        guard let slash = key.lastIndex(of: "/") else { return ("", key) }
        return (String(key[..<slash]), String(key[key.index(after: slash)...]))
    }

    // MARK: CacheStorage

    /// The entry in `key`'s file; `nil` when there is no file.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when the file cannot be read or is not an intact entry.
    public func entry(for key: String) throws(ErrandError) -> CachedEntry? {
        try storedEntry(for: key)?.cached
    }

    /// Writes `entry` to `key`'s file, then evicts what its folder's size limit requires.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when it cannot be written.
    public func store(_ entry: CachedEntry, for key: String) throws(ErrandError) {
        // A wrapping storage may have changed the body (encrypted it): its checksum is made anew.
        guard let stored = CacheEntry(cached: entry, hashingBody: true) else {
            throw .serialization("the cache entry for \(key) has details Errand did not write")
        }
        try store(stored, for: key)
    }

    /// Deletes `key`'s file.
    public func removeEntry(for key: String) {
        guard let url = fileURL(for: key) else { return }
        try? FileManager.default.removeItem(at: url)
        let (folder, name) = Self.split(key)
        state.withLock { forget(name, in: folder, state: &$0) }
    }

    /// Deletes the entries in the folder `folder` and the folders below it, or in the whole cache
    /// directory for `""`: the files Errand wrote, recognised by name and content, and none other —
    /// an app's own files beside them stay. Folders the deletion leaves empty go too, the cache
    /// directory itself excepted.
    public func removeAll(under folder: String) {
        let directory = folder.isEmpty ? root.url : fileURL(for: folder)
        guard let directory else { return }
        state.withLock { state in
            state.indexes = state.indexes.filter {
                !folder.isEmpty && $0.key != folder && !$0.key.hasPrefix(folder + "/")
            }
        }
        CacheEntryFiles.removeAll(in: directory, keepingFolder: folder.isEmpty)
    }

    // MARK: Entries as Errand keeps them

    /// The entry in `key`'s file, as ``entry(for:)`` reads it but without making a ``CachedEntry``.
    func storedEntry(for key: String) throws(ErrandError) -> CacheEntry? {
        guard let url = fileURL(for: key) else { return nil }
        let file: Data
        do {
            file = try Data(contentsOf: url)
        } catch {
            // Judged by the error, not by looking again: the file may appear in between.
            if (error as? CocoaError)?.code == .fileReadNoSuchFile { return nil }
            throw .fileSystem("cannot read the cache entry \(url.path): \(error.localizedDescription)")
        }
        guard let entry = CacheEntry(file: file) else {
            throw .fileSystem("the cache entry \(url.path) is truncated or corrupted")
        }
        // The modification date carries the use over to the next process's eviction order; set
        // off the reading thread, which a lookup may have borrowed.
        touching.async { _ = utimes(url.path, nil) }
        let (folder, name) = Self.split(key)
        noteUse(folder: folder, name: name)
        return entry
    }

    /// Writes `entry` to `key`'s file, as ``store(_:for:)`` does but from the entry as Errand keeps it.
    func store(_ entry: CacheEntry, for key: String) throws(ErrandError) {
        guard let url = fileURL(for: key) else { throw .fileSystem("the cache key \(key) leaves the cache directory") }
        let file = entry.encoded()
        try OwnerOnlyFile.write(file, to: url, creatingDirectory: true)
        let (folder, name) = Self.split(key)
        let directory = url.deletingLastPathComponent()
        // The first write to a folder lists it, outside the lock that every lookup takes.
        let scanned = state.withLock { $0.indexes[folder] } == nil ? Self.scan(directory) : nil
        let evicted = state.withLock { state -> [String] in
            if state.indexes[folder] == nil, let scanned {
                state.indexes[folder] = Self.index(of: scanned, clock: &state.useClock)
            }
            forget(name, in: folder, state: &state)
            state.useClock += 1
            state.indexes[folder]?.files[name] = FileRecord(size: file.count, lastUse: state.useClock)
            state.indexes[folder]?.totalSize += file.count
            return evictions(in: folder, state: &state)
        }
        for name in evicted {
            let url = directory.appendingPathComponent(name, isDirectory: false)
            try? FileManager.default.removeItem(at: url)
            onEvict(url)
        }
    }

    /// The folders named `name` under the cache directory, at any depth, found on the disk; none
    /// is looked into for another.
    func folders(named name: String) -> [URL] {
        CacheEntryFiles.folders(named: name, under: root.url)
    }

    // MARK: Eviction

    /// Records a use of the entry `name` in `folder` — also one served from memory — so eviction
    /// takes the least recently used.
    func noteUse(folder: String, name: String) {
        state.withLock { state in
            state.useClock += 1
            state.indexes[folder]?.files[name]?.lastUse = state.useClock
        }
    }

    /// The names of the files `folder` must lose to be within the size limit, least recently used first.
    private func evictions(in folder: String, state: inout State) -> [String] {
        let limit = sizeLimit()
        guard var index = state.indexes[folder], limit > 0, index.totalSize > limit else { return [] }
        var evicted: [String] = []
        for (name, record) in index.files.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard index.totalSize > limit else { break }
            index.files[name] = nil
            index.totalSize -= record.size
            evicted.append(name)
        }
        state.indexes[folder] = index
        return evicted
    }

    private func forget(_ name: String, in folder: String, state: inout State) {
        if let removed = state.indexes[folder]?.files.removeValue(forKey: name) {
            state.indexes[folder]?.totalSize -= removed.size
        }
    }

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
            if CacheEntryFiles.isWriteInProgress(url.lastPathComponent) && modified.timeIntervalSinceNow < -600 {
                try? FileManager.default.removeItem(at: url)
                continue
            }
            // An app's own files may share the folder: only Errand's entries count, and are evicted.
            guard CacheEntryFiles.isEntry(url) else { continue }
            found.append((url.lastPathComponent, values.fileSize ?? 0, modified))
        }
        return found.sorted { $0.modified < $1.modified }
    }

    private static func index(of files: [(name: String, size: Int, modified: Date)], clock: inout UInt64)
        -> FolderIndex
    {
        var index = FolderIndex()
        for file in files {
            clock += 1
            index.files[file.name] = FileRecord(size: file.size, lastUse: clock)
            index.totalSize += file.size
        }
        return index
    }
}
