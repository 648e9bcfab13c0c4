import Foundation

/// Where one request's cached response lives: the cache directory after filters, and a
/// fixed-length file name hashed from everything that identifies the response.
struct CacheKey: Sendable, Hashable {
    /// The canonical description the file name is hashed from. It may hold tokens, so it never
    /// goes to disk: the entry keeps ``identityHash`` instead.
    let identity: String
    /// Two more independent hashes of `identity`, kept in the entry so that a file-name
    /// collision reads as a miss rather than as another request's response.
    let identityHash: String
    let directory: URL
    /// Two independent 64-bit hashes of `identity`: 32 hex digits, so distinct requests practically never share a file.
    let fileName: String

    /// Method, resolved base URL, `url`, canonical `cacheKeyArguments` (sorted keys, stable
    /// numbers) and the values of `cacheKeyHeaders`.
    init(request: any BaseRequest, config: NetworkConfig) throws(ErrandError) {
        var identity = "\(request.method.rawValue) \(RequestURLBuilder.baseURLString(for: request, config: config))"
        identity += " \(request.url)"
        if let arguments = request.cacheKeyArguments(request.arguments) {
            identity += " \(try ArgumentValue.object(arguments).json)"
        }
        for name in request.cacheKeyHeaders.sorted() {
            identity += " \(name.lowercased()): \(request.headers.headerField(name) ?? "")"
        }
        self.identity = identity
        self.directory = try Self.directory(for: request, config: config)
        self.fileName =
            FNV1a.hex(of: identity.utf8) + FNV1a.hex(of: identity.utf8, seed: 0x8422_2325_cbf2_9ce4) + ".cache"
        self.identityHash =
            FNV1a.hex(of: identity.utf8, seed: 0x9e37_79b9_7f4a_7c15) + FNV1a.hex(of: identity.utf8, seed: 0x2545_f491)
    }

    var fileURL: URL {
        directory.appendingPathComponent(fileName, isDirectory: false)
    }

    /// Whether the entry lives in `folder` or a folder below it: `…/acct1` holds `…/acct1/x`, not `…/acct10/x`.
    func isStored(under folder: URL) -> Bool {
        Self.path(directory.path, isUnder: folder.path)
    }

    /// Whether `path` is `folder` or lies below it, compared by whole path components.
    static func path(_ path: String, isUnder folder: String) -> Bool {
        let folder = folder.hasSuffix("/") ? String(folder.dropLast()) : folder
        return path == folder || path.hasPrefix(folder + "/")
    }

    /// The cache directory after the filters, which must stay inside it.
    /// - Throws: ``ErrandError/fileSystem(_:)`` for a folder outside the cache directory (`..`,
    ///   another absolute path) or a path with a NUL byte.
    private static func directory(for request: any BaseRequest, config: NetworkConfig) throws(ErrandError) -> URL {
        let root = config.cacheDirectory.standardizedFileURL
        let path = config.cacheDirPathFilters.reduce(root.path) { $1.filterCacheDirPath($0, request: request) }
        let directory = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        guard !path.contains("\0"), Self.path(directory.path, isUnder: root.path) else {
            throw .fileSystem("the cache folder \"\(path)\" is outside the cache directory \(root.path)")
        }
        return directory
    }
}
