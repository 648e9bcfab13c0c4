/// What `/http-cache/{name}` answers for one name, set by a test with
/// ``TestServer/setCacheableResource(_:_:)``: a body with its validators and caching fields,
/// answered `304 Not Modified` when a request's validator matches.
public struct CacheableResource: Sendable {
    /// The status of a full answer.
    public var status: Int
    /// The body of a full answer.
    public var body: String
    /// The `ETag`, quotes included (`"v1"`, `W/"v1"`); `nil` for none.
    public var etag: String?
    /// The `Last-Modified` HTTP-date; `nil` for none.
    public var lastModified: String?
    /// Fields of every answer, full or `304`: `Cache-Control`, `Expires`, `Date`, `Vary`, …
    public var headers: [String: String]
    /// Fields only a `304` carries, to see them merged into the stored response.
    public var notModifiedHeaders: [String: String]

    public init(
        status: Int = 200, body: String, etag: String? = nil, lastModified: String? = nil,
        headers: [String: String] = [:], notModifiedHeaders: [String: String] = [:]
    ) {
        self.status = status
        self.body = body
        self.etag = etag
        self.lastModified = lastModified
        self.headers = headers
        self.notModifiedHeaders = notModifiedHeaders
    }
}
