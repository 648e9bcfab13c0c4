import Foundation

/// One cached response as a ``CacheStorage`` keeps it: the response, and what decides whether it
/// may be served — when it was stored, under which version, app version and sensitive data.
///
/// A storage keeps every field as it was given and hands it back unchanged; ``details`` is
/// Errand's own bookkeeping (a hash that tells keys that collide apart, when the request was
/// sent, the variants of a URL), opaque to the storage.
public struct CachedEntry: Sendable, Codable, Equatable {
    /// The response's status code.
    public var statusCode: Int
    /// The response's header fields as stored (without `Set-Cookie`).
    public var headers: [String: String]
    /// The response's body.
    public var body: Data
    /// When it was stored, by ``NetworkConfig/cacheClock``.
    public var storedAt: Date
    /// The request's ``BaseRequest/cacheVersion`` when it was stored.
    public var cacheVersion: Int
    /// ``NetworkConfig/appVersion`` when it was stored.
    public var appVersion: String
    /// A hash of the request's ``BaseRequest/cacheSensitiveData``, never the value; `nil` without one.
    public var sensitiveDataHash: String?
    /// Errand's bookkeeping for the entry, to be kept as it is.
    public var details: Data

    /// The `ETag` validator a revalidation sends back, if the response had one.
    public var entityTag: String? { headers.headerField("ETag") }

    /// The `Last-Modified` validator a revalidation sends back, if the response had one.
    public var lastModified: String? { headers.headerField("Last-Modified") }

    /// Creates an entry; a storage that keeps entries in its own format rebuilds them with this.
    public init(
        statusCode: Int, headers: [String: String], body: Data, storedAt: Date, cacheVersion: Int,
        appVersion: String, sensitiveDataHash: String?, details: Data
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.storedAt = storedAt
        self.cacheVersion = cacheVersion
        self.appVersion = appVersion
        self.sensitiveDataHash = sensitiveDataHash
        self.details = details
    }
}
