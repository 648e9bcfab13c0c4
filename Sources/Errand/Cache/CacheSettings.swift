import Foundation

/// How one caching request is cached, taken from its definition once, when it starts: the cache
/// reads and stores by these values and never looks at the request again.
struct CacheSettings: Sendable {
    /// Where the entry lives.
    let key: CacheKey
    /// The request's `cacheTimeInSeconds`: how old an entry may be and still be served.
    let lifetime: Int
    /// The request's `cacheVersion`; an entry stored under another is not served.
    let version: Int
    /// A hash of the request's `cacheSensitiveData`, so that no entry file holds the value itself.
    let sensitiveDataHash: String?
    let policy: CachePolicy

    /// The settings of `request`; `nil` when it does not cache (`cacheTimeInSeconds <= 0`, or a download).
    /// - Throws: ``ErrandError/serialization(_:)`` when its `cacheKeyArguments` cannot be encoded, or
    ///   ``ErrandError/fileSystem(_:)`` when a ``CacheDirPathFilter`` leads outside the cache directory.
    init?(request: any BaseRequest, config: NetworkConfig) throws(ErrandError) {
        guard request.cacheTimeInSeconds > 0, request.resumableDownloadPath == nil else { return nil }
        key = try CacheKey(request: request, config: config)
        lifetime = request.cacheTimeInSeconds
        version = request.cacheVersion
        sensitiveDataHash = Self.hash(ofSensitiveData: request.cacheSensitiveData)
        policy = request.cachePolicy
    }

    static func hash(ofSensitiveData value: String?) -> String? {
        value.map { FNV1a.hex(of: $0.utf8) }
    }
}
