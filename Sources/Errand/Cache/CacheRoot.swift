import Foundation

/// The cache directory, read anew at each use — ``NetworkConfig/cacheDirectory`` may change —
/// and standardized again only when it did: standardizing a path costs more than a memory hit.
final class CacheRoot: Sendable {
    private let current: @Sendable () -> URL
    private let known = Locked<(url: URL, standardized: URL)?>(nil)

    init(_ current: @escaping @Sendable () -> URL) {
        self.current = current
    }

    /// The directory, standardized.
    var url: URL {
        let url = current()
        if let known = known[\.self], known.url == url { return known.standardized }
        let standardized = url.standardizedFileURL
        known[\.self] = (url, standardized)
        return standardized
    }
}
