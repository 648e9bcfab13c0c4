import Foundation

/// The folders of one cache: which were cleared since a request started — its response then
/// stays out of them, so a sign-out is not undone by a request still in flight — and which the
/// cache stored entries in, to find an account's folder wherever the filters put it.
final class CacheFolders: Sendable {
    private struct State {
        /// By the epoch each clearing began at (``CacheSettings/nextEpoch()``).
        var cleared: [URL: UInt64] = [:]
        var used: Set<URL> = []
    }

    private let state = Locked(State())

    /// Runs `store` for an entry under `key` unless its folder was cleared after `epoch`, the
    /// epoch of the storing request's settings. `store` runs under the lock ``clear(_:_:)`` takes:
    /// a store is wholly before a clearing, which then deletes it in memory and (queued behind
    /// it) on disk, or wholly after it. `store` must do no I/O.
    func admit(_ key: CacheKey, since epoch: UInt64, _ store: () -> Void) {
        state.withLock { state in
            guard !state.cleared.contains(where: { $0.value > epoch && key.isStored(under: $0.key) }) else { return }
            state.used.insert(key.directory)
            store()
        }
    }

    /// Records that `directory` is cleared from now on, and runs `clear` under the lock
    /// ``admit(_:since:_:)`` takes; `clear` must do no I/O.
    func clear(_ directory: URL, _ clear: () -> Void) {
        state.withLock { state in
            state.cleared[directory] = CacheSettings.nextEpoch()
            clear()
        }
    }

    /// The folders named `name` under the cache directory `root`: cut at that name from `known`
    /// and from the folders entries were stored in, and `root/name` itself; none inside another.
    func named(_ name: String, under root: URL, among known: [URL]) -> [URL] {
        let root = root.standardizedFileURL
        var found: Set<URL> = [root.appendingPathComponent(name, isDirectory: true)]
        for folder in state.withLock({ $0.used }).union(known) where CacheKey.path(folder.path, isUnder: root.path) {
            let components = folder.standardizedFileURL.pathComponents.dropFirst(root.pathComponents.count)
            guard let index = components.firstIndex(of: name) else { continue }
            found.insert(components[...index].reduce(root) { $0.appendingPathComponent($1, isDirectory: true) })
        }
        // One inside another is cleared with it.
        return found.filter { folder in
            !found.contains { $0 != folder && CacheKey.path(folder.path, isUnder: $0.path) }
        }
    }
}
