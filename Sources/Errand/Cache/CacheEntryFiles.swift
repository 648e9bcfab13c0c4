import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Which files of a cache directory are Errand's, and deleting only those: an app may point
/// ``NetworkConfig/cacheDirectory`` at a folder it keeps files of its own in (its Caches folder).
///
/// An entry is a `.cache` file that begins with an entry's magic bytes (``CacheEntry``): the name
/// alone — ``CacheKey`` names them by a 32-hex-digit hash — could be an app's own hash-named
/// file. A write in progress is such a name, a dot, a UUID and ``OwnerOnlyFile/temporarySuffix``.
enum CacheEntryFiles {
    /// Whether `url` is an entry Errand wrote.
    static func isEntry(_ url: URL) -> Bool {
        isEntryName(url.lastPathComponent) && startsWithMagic(url)
    }

    /// Whether `name` is that of an entry being written, or left half written by a crash.
    static func isWriteInProgress(_ name: String) -> Bool {
        guard name.hasSuffix(OwnerOnlyFile.temporarySuffix) else { return false }
        let written = name.dropLast(OwnerOnlyFile.temporarySuffix.count)
        guard let dot = written.lastIndex(of: ".") else { return false }
        return isEntryName(written[..<dot]) && UUID(uuidString: String(written[written.index(after: dot)...])) != nil
    }

    /// Deletes Errand's entries in `directory` and the folders below it, and the writes of
    /// entries left there; then each folder this left empty, `directory` too unless
    /// `keepingFolder`. Links are not followed: what they point at is not the cache's.
    /// - Returns: Whether anything was deleted.
    @discardableResult
    static func removeAll(in directory: URL, keepingFolder: Bool) -> Bool {
        guard let contents = try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [])
        else { return false }
        var removed = false
        for url in contents {
            if isDirectory(url) {
                removed = removeAll(in: url, keepingFolder: false) || removed
            } else if isEntry(url) || isWriteInProgress(url.lastPathComponent) {
                removed = (try? FileManager.default.removeItem(at: url)) != nil || removed
            }
        }
        // rmdir removes only an empty folder: one holding an app's file stays, and one that held
        // none of Errand's is not touched.
        if removed, !keepingFolder { rmdir(directory.path) }
        return removed
    }

    /// The folders named `name` under `directory`, at any depth; links are not followed, and a
    /// folder found is not looked into for another.
    static func folders(named name: String, under directory: URL) -> [URL] {
        guard let contents = try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: [])
        else { return [] }
        return contents.filter(isDirectory).flatMap { folder in
            folder.lastPathComponent == name ? [folder] : folders(named: name, under: folder)
        }
    }

    /// Whether `url` is a folder itself, not a link to one: the attributes of a link are its own.
    private static func isDirectory(_ url: URL) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.type] as? FileAttributeType) == .typeDirectory
    }

    private static func isEntryName(_ name: some StringProtocol) -> Bool {
        name.hasSuffix(".cache") && name.count > ".cache".count
    }

    /// Whether the file begins as every entry file Errand has written does (`ERRANDC` and a version).
    private static func startsWithMagic(_ url: URL) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        return (try? handle.read(upToCount: magic.count)) == magic
    }

    private static let magic = Data("ERRANDC".utf8)
}
