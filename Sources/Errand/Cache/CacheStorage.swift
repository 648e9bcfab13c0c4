/// Where an agent's cached responses live: the disk by default (``DiskCacheStorage``); an
/// encrypted store or a database when the app plugs one into ``NetworkConfig/cacheStorage``.
///
/// Keys are Errand's own: opaque strings that begin with the folder the configuration's
/// ``CacheDirPathFilter``s chose, relative to ``NetworkConfig/cacheDirectory`` — `account-ann/…`
/// for an account's entry, no folder for the shared one — so ``removeAll(under:)`` can delete
/// one account's. Errand calls a storage from its own background queue, one change at a time,
/// and its lookups from any thread; it keeps an entry being written in memory until
/// ``store(_:for:)`` returns, and its memory layer above every storage. Offline mode,
/// revalidation and every ``CachePolicy`` work the same on any storage.
public protocol CacheStorage: Sendable {
    /// The entry stored under `key`; `nil` when there is none.
    /// - Throws: ``ErrandError/fileSystem(_:)`` (or any ``ErrandError``) when it exists but cannot
    ///   be read: the request then goes to the network, as for a corrupted entry.
    func entry(for key: String) throws(ErrandError) -> CachedEntry?

    /// Stores `entry` under `key`, replacing any entry there whole: a reader gets the old entry
    /// or the new one, never a mix.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when it cannot be stored; the previous entry, or
    ///   none, stays.
    func store(_ entry: CachedEntry, for key: String) throws(ErrandError)

    /// Deletes the entry under `key`, if there is one.
    func removeEntry(for key: String)

    /// Deletes every entry whose key begins with `folder` followed by `/`; every entry for `""`.
    func removeAll(under folder: String)
}
