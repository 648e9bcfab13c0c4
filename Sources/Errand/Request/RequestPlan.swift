import Foundation

/// What the stages after the build need from a request, taken from its definition once when it
/// starts; the stages never look at the ``BaseRequest`` again.
struct RequestPlan: Sendable {
    /// Where and how the response is cached; `nil` when the request does not cache.
    let cache: CacheSettings?
    let rules: ResponseRules
    let interceptors: InterceptorChain
    /// The path a GET downloads to.
    let downloadTarget: String?
    /// The file a POST, PUT or PATCH uploads resumably.
    let resumableUploadPath: String?
    let priority: RequestPriority
    /// The most bytes the body may have in memory.
    let maximumResponseSize: Int
    /// What a stream keeps of a refused response's body: `nil` for its start
    /// (``StreamReceiver/keptErrorBodySize``); when the request sets its own
    /// ``BaseRequest/maximumResponseSize``, all of it up to that size, as a request that is not
    /// streamed keeps its body — for adapters that hand an error on whole. Never for a WebSocket.
    let refusedStreamBodyLimit: Int?
    /// Whether an interceptor started the request for an attempt that holds a slot, such as a
    /// token refresh: it skips the concurrency limit (see ``InterceptorScope``).
    let isInterceptorWork: Bool
    /// The jar of the account an interceptor started this request for, in place of the
    /// configuration's; `nil` outside such work.
    let accountCookieJar: CookieJar?
    /// Whether an identical call in flight may answer it too; never for a download, which writes
    /// its own file, nor for a streamed upload body, which only one call can read.
    let coalesces: Bool
    /// Whether only the cache may answer: ``NetworkConfig/isOffline`` or ``CachePolicy/cacheOnly``.
    let isOffline: Bool
    /// Whether the body goes to a ``ResponseStream``: never cached, downloaded or shared.
    let streams: Bool
    /// The expired entry this call asks the server about, set once the request carries its
    /// validator: a `304` answer becomes that entry, refreshed.
    var revalidation: Revalidation?
    /// When the request was built to be sent, by ``NetworkConfig/cacheClock``, for an HTTP cache's
    /// age of the response (``BaseRequest/followsHTTPCaching`` only).
    var sentAt: Date?
    /// Whether the cache is to be asked again once the request is final: its URL's stored
    /// responses vary on the fields it goes out with (``ResponseCache/Lookup/varies``).
    var choosesVariantAsSent = false

    /// - Throws: ``ErrandError/serialization(_:)`` when its `cacheKeyArguments` cannot be encoded, or
    ///   ``ErrandError/fileSystem(_:)`` when a ``CacheDirPathFilter`` leads outside the cache directory.
    ///
    /// A request that `streams` neither caches nor downloads to its `resumableDownloadPath`, and
    /// each call has its own stream; its `maximumResponseSize` bounds one line or event.
    /// `upgradesToWebSocket` makes it a WebSocket's handshake, which streams and only `101` answers.
    init(_ request: any BaseRequest, config: NetworkConfig, streams: Bool = false, upgradesToWebSocket: Bool = false)
        throws(ErrandError)
    {
        cache = streams ? nil : try CacheSettings(request: request, config: config)
        rules = ResponseRules(request: request, upgradesToWebSocket: upgradesToWebSocket)
        interceptors = InterceptorChain(request: request, config: config)
        downloadTarget = request.method == .get && !streams ? request.resumableDownloadPath : nil
        resumableUploadPath = try Self.resumableUploadPath(of: request, streams: streams)
        priority = request.priority
        maximumResponseSize = request.maximumResponseSize ?? config.maximumResponseSize
        refusedStreamBodyLimit = streams && !upgradesToWebSocket ? request.maximumResponseSize : nil
        isInterceptorWork = InterceptorScope.isActive
        accountCookieJar = InterceptorScope.cookieJar
        coalesces = request.coalescesDuplicates && downloadTarget == nil && !streams && !Self.streamsBody(request)
        isOffline = config.isOffline || (request.cachePolicy == .cacheOnly && !streams)
        self.streams = streams
    }

    /// `request`'s ``BaseRequest/resumableUploadPath``.
    /// - Throws: ``ErrandError/serialization(_:)`` for a method without a body or a stream,
    ///   which would silently send no file, or resume a body the consumer already read.
    private static func resumableUploadPath(of request: any BaseRequest, streams: Bool) throws(ErrandError) -> String? {
        guard let path = request.resumableUploadPath else { return nil }
        guard !request.method.encodesArgumentsInQuery else {
            throw .serialization(
                "\(type(of: request)) sets resumableUploadPath on a \(request.method.rawValue), which has no body:"
                    + " use POST, PUT or PATCH")
        }
        guard !streams else {
            throw .serialization("\(type(of: request)) sets resumableUploadPath: its response cannot be streamed")
        }
        return path
    }

    /// Whether `request`'s body is produced while it is sent (``UploadBody/stream(_:length:)``).
    private static func streamsBody(_ request: any BaseRequest) -> Bool {
        if case .stream = request.uploadBody { return true }
        return false
    }
}
