import Errand
import Foundation

/// From "Caching", "Your own storage": a ``CacheStorage`` that keeps entries in a dictionary.
/// `ERRAND_CACHE_STORAGE=memory` runs the cache suites on it instead of the disk, which shows the
/// protocol is enough for a store of the app's own: offline mode, revalidation and every
/// policy behave the same.
final class InMemoryCacheStorage: CacheStorage, @unchecked Sendable {  // `lock` guards `entries`.
    private let lock = NSLock()
    private var entries: [String: CachedEntry] = [:]

    func entry(for key: String) -> CachedEntry? {
        lock.withLock { entries[key] }
    }

    func store(_ entry: CachedEntry, for key: String) {
        lock.withLock { entries[key] = entry }
    }

    func removeEntry(for key: String) {
        lock.withLock { entries[key] = nil }
    }

    func removeAll(under folder: String) {
        lock.withLock { entries = folder.isEmpty ? [:] : entries.filter { !$0.key.hasPrefix(folder + "/") } }
    }

    /// Every entry held, for tests that look inside them.
    var allEntries: [CachedEntry] {
        lock.withLock { Array(entries.values) }
    }

    /// The keys of the entries held.
    var allKeys: [String] {
        lock.withLock { Array(entries.keys) }
    }

    /// Whether the cache suites run on this storage rather than the disk.
    static let isSelected = ProcessInfo.processInfo.environment["ERRAND_CACHE_STORAGE"] == "memory"
}
