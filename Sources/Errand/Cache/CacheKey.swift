import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Where one request's cached response lives: the cache directory after filters, and a
/// fixed-length file name hashed from everything that identifies the response.
struct CacheKey: Sendable, Hashable {
    /// The canonical description the file name is hashed from. It may hold tokens, so it never
    /// goes to disk: the entry keeps ``identityHash`` instead.
    let identity: String
    /// Two more independent hashes of `identity`, kept in the entry so that a file-name
    /// collision reads as a miss rather than as another request's response.
    let identityHash: String
    /// The folder the entry lives in.
    let folder: Folder
    /// Two independent 64-bit hashes of `identity`: 32 hex digits, so distinct requests practically never share a file.
    let fileName: String

    /// Method, resolved base URL, `url`, canonical `cacheKeyArguments` (sorted keys, stable
    /// numbers) and the values of `cacheKeyHeaders`. A request that follows HTTP caching is
    /// keyed by its ``targetURI(of:custom:config:)`` alone, as RFC 9111 §2 keys a response.
    init(request: any BaseRequest, config: NetworkConfig) throws(ErrandError) {
        let folder = try Self.folder(for: request, config: config)
        if NetworkConfig.$reading.withValue(config, operation: { request.followsHTTPCaching }) {
            let targetURI = try Self.targetURI(of: request, custom: request.buildCustomURLRequest(), config: config)
            self.init(targetURI: targetURI, folder: folder)
            return
        }
        var identity = "\(request.method.rawValue) \(RequestURLBuilder.baseURLString(for: request, config: config))"
        identity += " \(request.url)"
        if let arguments = request.cacheKeyArguments(request.arguments) {
            identity += " \(try ArgumentValue.object(arguments).json)"
        }
        for name in request.cacheKeyHeaders.sorted() {
            identity += " \(name.lowercased()): \(request.headers.headerField(name) ?? "")"
        }
        self.init(identity: identity, folder: folder)
    }

    /// The key of an HTTP cache's entry for `targetURI` in `folder`: what a GET and a HEAD of
    /// it share, and what an unsafe method's answer invalidates (RFC 9111 §4.4).
    init(targetURI: URL, folder: Folder) {
        // Before their variants were chosen by the request as sent, entries were keyed "HTTP …":
        // those are never found, as one may hold a response to another account's credential.
        self.init(identity: "HTTP-as-sent \(Self.withoutFragment(targetURI))", folder: folder)
    }

    /// The key of one variant of the URL this key is for: the variants' `id`, and the request's
    /// values of the fields they vary on.
    func variant(id: String, values: [String: String?]) -> CacheKey {
        let selected = values.sorted { $0.key < $1.key }.map { name, value in
            value.map { "\(name)=\($0)" } ?? "\(name) absent"
        }
        return CacheKey(identity: "\(identity) variant \(id) \(selected.joined(separator: "\n"))", folder: folder)
    }

    private init(identity: String, folder: Folder) {
        self.identity = identity
        self.folder = folder
        self.fileName =
            FNV1a.hex(of: identity.utf8) + FNV1a.hex(of: identity.utf8, seed: 0x8422_2325_cbf2_9ce4) + ".cache"
        self.identityHash =
            FNV1a.hex(of: identity.utf8, seed: 0x9e37_79b9_7f4a_7c15) + FNV1a.hex(of: identity.utf8, seed: 0x2545_f491)
    }

    /// The URL `request` targets as an HTTP cache keys it: resolved as it is sent but before the
    /// URL filters, which add tokens and app-wide parameters that must not split the cache, with
    /// its `cacheKeyArguments` in the query when its method sends arguments there. The URL of
    /// `custom`, the request's ``BaseRequest/buildCustomURLRequest()`` when it has one, as it is.
    static func targetURI(of request: any BaseRequest, custom: URLRequest?, config: NetworkConfig)
        throws(ErrandError) -> URL
    {
        if let url = custom?.url { return url }
        let inQuery = request.method.encodesArgumentsInQuery || request.uploadBody != nil
        let arguments = inQuery ? request.cacheKeyArguments(request.arguments) : nil
        let query = try arguments.map { arguments throws(ErrandError) in try ArgumentValue.object(arguments).formEncoded
        }
        return try RequestURLBuilder.url(for: request, config: config, query: query ?? "", applyingFilters: false)
    }

    /// `url` as text without its fragment, which never reaches the server.
    private static func withoutFragment(_ url: URL) -> String {
        let text = url.absoluteString
        return text.firstIndex(of: "#").map { String(text[..<$0]) } ?? text
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

    /// A folder of the cache directory: where it is, and its path relative to the cache
    /// directory (`""` for the directory itself), which a ``CacheStorage``'s keys begin with.
    struct Folder: Sendable, Hashable {
        let url: URL
        let relativePath: String
    }

    /// The cache directory's folder for `request` after the filters, which must stay inside it.
    /// - Throws: ``ErrandError/fileSystem(_:)`` for a folder outside the cache directory (`..`,
    ///   another absolute path) or a path with a NUL byte.
    static func folder(for request: any BaseRequest, config: NetworkConfig) throws(ErrandError) -> Folder {
        let root = config.cacheDirectory.standardizedFileURL
        let path = config.cacheDirPathFilters.reduce(root.path) { $1.filterCacheDirPath($0, request: request) }
        let directory = URL(fileURLWithPath: path, isDirectory: true).standardizedFileURL
        guard !path.contains("\0"), Self.path(directory.path, isUnder: root.path) else {
            throw .fileSystem("the cache folder \"\(path)\" is outside the cache directory \(root.path)")
        }
        let relative = String(directory.path.dropFirst(root.path.count).drop { $0 == "/" })
        return Folder(url: directory, relativePath: relative)
    }

    /// The folder's URL.
    var directory: URL { folder.url }

    /// The key a ``CacheStorage`` knows the entry by: its folder's relative path and file name.
    var storageKey: String {
        folder.relativePath.isEmpty ? fileName : folder.relativePath + "/" + fileName
    }
}
