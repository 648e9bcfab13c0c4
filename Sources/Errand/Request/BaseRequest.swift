import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One API call, declared as its own small type.
///
/// Conform a struct or a class and override only what differs from the defaults: usually
/// ``url``, often ``method`` and ``arguments``, sometimes a ``jsonValidator`` or a cache time.
///
/// ```swift
/// struct GetUserInfoApi: BaseRequest {
///     let userId: String
///     var url: String { "/users/\(userId)" }
///     var jsonValidator: JSONValidator? { ["nick": .string, "level": .number] }
/// }
///
/// let response = try await GetUserInfoApi(userId: "42").response()
/// ```
///
/// Start it with ``start(tag:userInfo:success:failure:)``, ``start(tag:userInfo:delegate:)``,
/// ``startOnMainActor(ignoreCache:tag:userInfo:success:failure:)`` or ``response(ignoreCache:)``.
public protocol BaseRequest: Sendable {
    /// The path of the request relative to the base URL (`"/users"`), or an absolute URL,
    /// which skips URL filters and the base. Default `""`.
    ///
    /// A relative `url` goes through ``NetworkConfig/urlFilters`` in order and is then resolved
    /// against the base URL the way a browser resolves a link: `"users"` is appended to the
    /// base's path, `"/users"` replaces it.
    var url: String { get }

    /// The base URL of this request; `""` uses ``NetworkConfig/baseUrl``. Default `""`.
    var baseUrl: String { get }

    /// The CDN base URL of this request; `""` uses ``NetworkConfig/cdnUrl``. Default `""`.
    var cdnUrl: String { get }

    /// Whether the request resolves against the CDN URL rather than the base URL. Default `false`.
    var useCDN: Bool { get }

    /// The HTTP method. Default ``HTTPMethod/get``.
    var method: HTTPMethod { get }

    /// The arguments: the query string for GET, HEAD and DELETE; the body for POST, PUT and
    /// PATCH, encoded per ``requestSerializerType``. Default `nil`.
    ///
    /// Values may be strings, numbers, booleans, `NSNull`, arrays and dictionaries of those.
    /// Keys are always written in sorted order, so equal arguments give equal requests.
    var arguments: [String: any Sendable]? { get }

    /// How a body built from ``arguments`` is encoded. Default ``RequestSerializerType/http``.
    var requestSerializerType: RequestSerializerType { get }

    /// How the response body is interpreted. Default ``ResponseSerializerType/json``.
    var responseSerializerType: ResponseSerializerType { get }

    /// Extra header fields. Default `[:]`.
    var headers: [String: String] { get }

    /// Credentials sent as an HTTP Basic `Authorization` header. Default `nil`.
    var authorization: (username: String, password: String)? { get }

    /// Whether the request sends the cookies of its agent's ``NetworkConfig/cookieJar`` (or its
    /// account's) and stores the ones its responses set. A `Cookie` field in ``headers`` is sent
    /// in place of the jar's either way. Default `true`.
    var usesCookies: Bool { get }

    /// Seconds the request may wait for data before it fails with ``ErrandError/timedOut``. Default `60`.
    var timeoutInterval: TimeInterval { get }

    /// The shape the JSON response must have; a mismatch fails the request with
    /// ``ErrandError/jsonValidation(path:expected:found:)``. Default `nil`, no check.
    var jsonValidator: JSONValidator? { get }

    /// Whether a response status code counts as success. Default: 200–299.
    func statusCodeValidator(_ code: Int) -> Bool

    /// Seconds a successful response is served from the cache; `-1` or `0` does not cache. Default `-1`.
    /// ``CacheLifetime`` names the usual values: `CacheLifetime.day`.
    var cacheTimeInSeconds: Int { get }

    /// A version stamped on cached responses; bump it to stop serving older entries. Default `0`.
    var cacheVersion: Int { get }

    /// A value stamped on cached responses, such as a user id; an entry stored with another
    /// value is not served. Default `nil`.
    var cacheSensitiveData: String? { get }

    /// The arguments that identify a cached response. Default: `arguments` unchanged.
    ///
    /// Remove tokens and timestamps here so that they do not split the cache. Arguments that
    /// ``NetworkConfig/urlFilters`` add never split it: the key is built from ``url`` before the
    /// filters run, so a filter is the place for a token or app-wide parameters.
    func cacheKeyArguments(_ arguments: [String: any Sendable]?) -> [String: any Sendable]?

    /// What happens when the cached entry is expired or the network fails; see ``CachePolicy``.
    /// Default ``CachePolicy/standard``.
    var cachePolicy: CachePolicy { get }

    /// Request header fields whose values are part of the cache key, for responses that vary by
    /// them, such as `Accept-Language`. Default `[]`: headers do not split the cache. Not used
    /// with ``followsHTTPCaching``, where the response's `Vary` says which fields matter.
    var cacheKeyHeaders: [String] { get }

    /// Whether the response is cached as a private HTTP cache caches it (RFC 9111): stored only
    /// when the method, status and `Cache-Control` allow, fresh for as long as the server says
    /// (`max-age`, `Expires`, or a heuristic from `Last-Modified`), served only to a request that
    /// sends the fields its `Vary` names alike, and with the request's own `Cache-Control`
    /// directives honoured. A positive ``cacheTimeInSeconds`` replaces the server's lifetime.
    /// The entry is keyed by the URL the request targets, so that a `POST`, `PUT`, `DELETE` or
    /// `PATCH` to it that succeeds removes it, and a `HEAD` is answered from it. See <doc:Caching>.
    var followsHTTPCaching: Bool { get }

    /// A file path a GET downloads its body to, resumably. Default `nil`, an in-memory response.
    ///
    /// The body streams into `<path>.errand-partial` beside the target, which survives failures,
    /// cancels and restarts: the next start of an equal request resumes it with `Range` and
    /// `If-Range`. The file appears at the path only when complete; a path that is a directory
    /// gets the URL's last path component. The response's ``Response/fileURL`` names it.
    var resumableDownloadPath: String? { get }

    /// Called on ``NetworkConfig/callbackQueue`` as a download's bytes reach the disk, newest
    /// value only when calls would queue up. Default `nil`. ``downloadProgress`` does the same
    /// for every request, downloads included; ``RequestTask/downloadProgress`` is the `async` form.
    var resumableDownloadProgress: (@Sendable (TransferProgress) -> Void)? { get }

    /// Called on ``NetworkConfig/callbackQueue`` as the response body arrives — of any request;
    /// for a download, as its bytes reach the disk — newest value only when calls would queue up;
    /// the last value's bytes equal the body's size. Default `nil`: a request nobody watches pays
    /// nothing for progress. ``RequestTask/downloadProgress`` is the `async` form.
    var downloadProgress: (@Sendable (TransferProgress) -> Void)? { get }

    /// Parts of a `multipart/form-data` body for POST, PUT or PATCH; ``arguments`` become fields
    /// before them. Default `nil`. File parts are streamed from disk, and a body over 1 MiB is
    /// encoded into a temporary file, off the calling thread, that is deleted when the request ends.
    var constructingBody: (@Sendable (inout MultipartFormData) -> Void)? { get }

    /// A body sent as it is, for POST, PUT or PATCH: bytes, a file streamed from disk, or
    /// chunks produced while it is sent (``UploadBody/stream(_:length:)``, never retried or
    /// coalesced). ``arguments`` then go in the query string. `Content-Type` is
    /// `application/octet-stream` unless ``headers`` names one. Default `nil`.
    var uploadBody: UploadBody? { get }

    /// A file path whose bytes a POST, PUT or PATCH uploads as its body, resumably (the IETF
    /// draft "Resumable Uploads for HTTP"). Default `nil`.
    ///
    /// The request offers the server to resume (`Upload-Complete: ?1`, `Upload-Length`); one that
    /// takes the offer answers `104 Upload Resumption Supported` with the upload's own URL on the
    /// same origin, which is kept in a file (owner-only) under ``NetworkConfig/cacheDirectory``, in
    /// the account's folder when ``NetworkConfig/cacheDirPathFilters`` choose one.
    /// After a dropped connection, a timeout or a `5xx` the request asks that URL for the offset
    /// the server holds (`HEAD`) and sends only the rest (`PATCH`, `Upload-Offset`); after a
    /// cancel or a restart of the app, the next start of an equal request does the same. A server
    /// that does not take the offer gets an ordinary upload. Not with ``uploadBody``; see
    /// <doc:Transfers>.
    var resumableUploadPath: String? { get }

    /// Called on ``NetworkConfig/callbackQueue`` as the body is sent, newest value only when
    /// calls would queue up; the last value's bytes equal the body's size. Default `nil`.
    /// ``RequestTask/uploadProgress`` is the `async` form.
    var uploadProgress: (@Sendable (TransferProgress) -> Void)? { get }

    /// Seconds the whole request may take, however steadily data flows, before it fails with
    /// ``ErrandError/timedOut``; for downloads that must not run forever. Default `nil`, no limit.
    /// (``timeoutInterval`` limits only the wait for each piece of data.)
    var timeoutIntervalForResource: TimeInterval? { get }

    /// The most bytes this request's response body may have in memory, or `nil` for
    /// ``NetworkConfig/maximumResponseSize``. For ``BaseRequest/stream()`` it bounds one line or
    /// event, and set here it also keeps a refused status's body whole up to it (else its first
    /// 64 KiB). Default `nil`.
    var maximumResponseSize: Int? { get }

    /// The order among queued requests. Default ``RequestPriority/default``.
    var priority: RequestPriority { get }

    /// Observers of every task that runs this request, told before it starts and around its
    /// callbacks. Default `[]`. To observe a single task, use ``RequestTask/addAccessory(_:)``.
    var requestAccessories: [any RequestAccessory] { get }

    /// A complete request to send instead of one built from ``url``, ``method``, ``arguments``,
    /// ``headers`` and ``authorization``. Default `nil`.
    func buildCustomURLRequest() -> URLRequest?

    /// Interceptors of this request alone, run after the config's. Default `[]`.
    var interceptors: [any RequestInterceptor] { get }

    /// Whether ``NetworkConfig/interceptors`` apply to this request. Default `true`; `false` for
    /// a token refresh request, which must not wait for the refresh it performs.
    var usesConfigInterceptors: Bool { get }

    /// Whether identical requests in flight share one network call. Default `true` for a GET
    /// without a ``resumableDownloadPath``, else `false`; never for a streamed ``uploadBody``,
    /// whatever this says.
    ///
    /// Identical means the same method, URL, header fields (credentials included after
    /// interceptors adapted them) and timeouts, and no body. Each caller keeps its own
    /// ``RequestTask`` and callback, and validates, decodes and retries on its own; cancelling one
    /// stops the shared call only when every caller has cancelled. A request joins only a call that
    /// has not yet begun to answer; one that comes later makes its own. Return `false` where each
    /// call must reach the server, such as a GET that counts or changes something.
    var coalescesDuplicates: Bool { get }
}

/// YTKNetwork's defaults: a conformer overrides only what differs.
extension BaseRequest {
    /// Default: `""`.
    public var url: String { "" }
    /// Default: `""`.
    public var baseUrl: String { "" }
    /// Default: `""`.
    public var cdnUrl: String { "" }
    /// Default: `false`.
    public var useCDN: Bool { false }
    /// Default: `.get`.
    public var method: HTTPMethod { .get }
    /// Default: `nil`.
    public var arguments: [String: any Sendable]? { nil }
    /// Default: `.http`.
    public var requestSerializerType: RequestSerializerType { .http }
    /// Default: `.json`.
    public var responseSerializerType: ResponseSerializerType { .json }
    /// Default: `[:]`.
    public var headers: [String: String] { [:] }
    /// Default: `nil`.
    public var authorization: (username: String, password: String)? { nil }
    /// Default: `true`.
    public var usesCookies: Bool { true }
    /// Default: `60`.
    public var timeoutInterval: TimeInterval { 60 }
    /// Default: `nil`.
    public var jsonValidator: JSONValidator? { nil }
    /// Default: `(200...299).contains(code)`.
    public func statusCodeValidator(_ code: Int) -> Bool { (200...299).contains(code) }
    /// Default: `-1`.
    public var cacheTimeInSeconds: Int { -1 }
    /// Default: `0`.
    public var cacheVersion: Int { 0 }
    /// Default: `nil`.
    public var cacheSensitiveData: String? { nil }
    /// Default: `arguments`.
    public func cacheKeyArguments(_ arguments: [String: any Sendable]?) -> [String: any Sendable]? { arguments }
    /// Default: `.standard`.
    public var cachePolicy: CachePolicy { .standard }
    /// Default: `[]`.
    public var cacheKeyHeaders: [String] { [] }
    /// Default: ``NetworkConfig/followsHTTPCaching`` of the agent that runs the request.
    public var followsHTTPCaching: Bool { (NetworkConfig.reading ?? .shared).followsHTTPCaching }
    /// Default: `nil`.
    public var resumableDownloadPath: String? { nil }
    /// Default: `nil`.
    public var resumableDownloadProgress: (@Sendable (TransferProgress) -> Void)? { nil }
    /// Default: `nil`.
    public var downloadProgress: (@Sendable (TransferProgress) -> Void)? { nil }
    /// Default: `nil`.
    public var constructingBody: (@Sendable (inout MultipartFormData) -> Void)? { nil }
    /// Default: `nil`.
    public var uploadBody: UploadBody? { nil }
    /// Default: `nil`.
    public var resumableUploadPath: String? { nil }
    /// Default: `nil`.
    public var uploadProgress: (@Sendable (TransferProgress) -> Void)? { nil }
    /// Default: `nil`.
    public var timeoutIntervalForResource: TimeInterval? { nil }
    /// Default: `.default`.
    public var priority: RequestPriority { .default }
    /// Default: `[]`.
    public var requestAccessories: [any RequestAccessory] { [] }
    /// Default: `nil`.
    public func buildCustomURLRequest() -> URLRequest? { nil }

    /// Default: `nil`, the config's limit.
    public var maximumResponseSize: Int? { nil }
    /// Default: `[]`.
    public var interceptors: [any RequestInterceptor] { [] }
    /// Default: `true`.
    public var usesConfigInterceptors: Bool { true }
    /// Default: `true` for a GET without a ``resumableDownloadPath``, else `false`.
    public var coalescesDuplicates: Bool { method == .get && resumableDownloadPath == nil }
}
