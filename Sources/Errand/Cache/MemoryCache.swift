import Foundation

/// Recently used cache entries kept in memory, so a hot entry is served without file I/O.
/// Bounded in bytes; the least recently used entries leave first.
final class MemoryCache: Sendable {
    private struct State {
        var entries: [CacheKey: (entry: CacheEntry, lastUse: UInt64)] = [:]
        var totalCost = 0
        var clock: UInt64 = 0
    }

    private let state = Locked(State())
    private let costLimit: @Sendable () -> Int

    /// `costLimit` is read on every insertion, so a changed ``NetworkConfig/memoryCacheSizeLimit`` applies at once.
    init(costLimit: @escaping @Sendable () -> Int) {
        self.costLimit = costLimit
    }

    func entry(for key: CacheKey) -> CacheEntry? {
        state.withLock { Self.use(key, in: &$0) }
    }

    /// Keeps `entry`, unless it alone would take more than a quarter of the budget.
    func insert(_ entry: CacheEntry, for key: CacheKey) {
        let limit = costLimit()
        state.withLock { Self.put(entry, for: key, limit: limit, in: &$0) }
    }

    /// Keeps `entry` unless one is already kept for `key`; returns the one kept, or `entry`.
    func insertIfAbsent(_ entry: CacheEntry, for key: CacheKey) -> CacheEntry {
        let limit = costLimit()
        return state.withLock { state in
            if let kept = Self.use(key, in: &state) { return kept }
            Self.put(entry, for: key, limit: limit, in: &state)
            return entry
        }
    }

    func remove(_ key: CacheKey) {
        state.withLock { Self.removeValue(for: key, from: &$0) }
    }

    /// Drops the entries whose file is `fileURL`, or lies under it when it is a directory.
    func removeAll(at fileURL: URL) {
        state.withLock { state in
            for key in state.entries.keys where key.fileURL == fileURL || key.isStored(under: fileURL) {
                Self.removeValue(for: key, from: &state)
            }
        }
    }

    private static func use(_ key: CacheKey, in state: inout State) -> CacheEntry? {
        guard let found = state.entries[key] else { return nil }
        state.clock += 1
        state.entries[key] = (found.entry, state.clock)
        return found.entry
    }

    private static func put(_ entry: CacheEntry, for key: CacheKey, limit: Int, in state: inout State) {
        removeValue(for: key, from: &state)
        guard entry.cost <= limit / 4 else { return }
        state.clock += 1
        state.entries[key] = (entry, state.clock)
        state.totalCost += entry.cost
        guard state.totalCost > limit else { return }
        for (oldKey, _) in state.entries.sorted(by: { $0.value.lastUse < $1.value.lastUse }) {
            guard state.totalCost > limit else { break }
            removeValue(for: oldKey, from: &state)
        }
    }

    private static func removeValue(for key: CacheKey, from state: inout State) {
        if let removed = state.entries.removeValue(forKey: key) {
            state.totalCost -= removed.entry.cost
        }
    }
}
