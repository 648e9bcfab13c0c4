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
    /// Whether the server's caching fields decide, as RFC 9111 says (``BaseRequest/followsHTTPCaching``).
    let followsHTTPCaching: Bool
    /// The request's method, for what may be stored.
    let method: String
    /// The URL an HTTP cache keys the request by (``CacheKey/targetURI(of:custom:config:)``); `nil` for
    /// YTKNetwork's cache.
    let targetURI: URL?
    /// The request's own header fields, for its `Range` where a lookup is not given the fields
    /// it goes out with; a URL's variants are chosen only by those (``SentFields``).
    let requestHeaders: [String: String]
    /// The request's own `Cache-Control` directives; `Pragma: no-cache` reads as `no-cache` when
    /// there are none (RFC 9111 §5.4).
    let requestCacheControl: CacheControl
    /// When the settings were taken, as a count all of them share with the clearings of the
    /// cache (``nextEpoch()``): a response of a request whose settings are older than the
    /// clearing of its folder is not stored there.
    let epoch = Self.nextEpoch()

    /// The settings of `request`; `nil` when it does not cache (`cacheTimeInSeconds <= 0` without
    /// `followsHTTPCaching`, or a download).
    /// - Throws: ``ErrandError/serialization(_:)`` when its `cacheKeyArguments` cannot be encoded, or
    ///   ``ErrandError/fileSystem(_:)`` when a ``CacheDirPathFilter`` leads outside the cache directory.
    init?(request: any BaseRequest, config: NetworkConfig) throws(ErrandError) {
        let followsHTTPCaching = NetworkConfig.$reading.withValue(config) { request.followsHTTPCaching }
        guard request.cacheTimeInSeconds > 0 || followsHTTPCaching, request.resumableDownloadPath == nil else {
            return nil
        }
        self.followsHTTPCaching = followsHTTPCaching
        // An HTTP cache judges the method and URL as sent, which a custom URLRequest may name (`M-SEARCH`).
        let custom = followsHTTPCaching ? request.buildCustomURLRequest() : nil
        method = custom?.httpMethod?.uppercased() ?? request.method.rawValue
        requestHeaders = request.headers
        requestCacheControl = CacheControl(
            request.headers.headerField("Cache-Control")
                ?? request.headers.headerField("Pragma").flatMap {
                    $0.trimmed.lowercased() == "no-cache" ? "no-cache" : nil
                })
        if followsHTTPCaching {
            let targetURI = try CacheKey.targetURI(of: request, custom: custom, config: config)
            self.targetURI = targetURI
            key = CacheKey(targetURI: targetURI, folder: try CacheKey.folder(for: request, config: config))
        } else {
            targetURI = nil
            key = try CacheKey(request: request, config: config)
        }
        lifetime = request.cacheTimeInSeconds
        version = request.cacheVersion
        sensitiveDataHash = Self.hash(ofSensitiveData: request.cacheSensitiveData)
        policy = request.cachePolicy
    }

    /// Whether a response that ended with `error` goes to the cache to be stored: a success, and
    /// for an HTTP cache any answer the status validator refused too, for RFC 9111's rules to
    /// decide (``ResponseCache/store(_:as:sentAt:)``).
    func offersToStore(after error: ErrandError?) -> Bool {
        error == nil || followsHTTPCaching && error?.isStatusCode == true
    }

    /// The next of a count that only grows, shared by settings and clearings.
    static func nextEpoch() -> UInt64 {
        epochs.withLock { epoch in
            epoch += 1
            return epoch
        }
    }

    private static let epochs = Locked<UInt64>(0)

    static func hash(ofSensitiveData value: String?) -> String? {
        value.map { FNV1a.hex(of: $0.utf8) }
    }
}
