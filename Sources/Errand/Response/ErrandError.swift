import Foundation

/// Everything that can make a request fail, as one enum to `switch` over.
public enum ErrandError: Error, Sendable, Equatable {
    /// No valid URL could be built; the payload is what was tried.
    case invalidURL(String)
    /// The status code was rejected by the request's `statusCodeValidator`.
    case statusCode(Int)
    /// The JSON response did not match the request's `jsonValidator`.
    /// `path` locates the value (`$.user.nick`); `expected` and `found` name the kinds.
    case jsonValidation(path: String, expected: String, found: String)
    /// The arguments could not be encoded, or the body could not be read as the response
    /// serializer type requires; the payload says which and why.
    case serialization(String)
    /// The connection failed; the `URLError` says how (`.cannotConnectToHost`, `.networkConnectionLost`, …)
    /// and, as its `failingURL`, to which URL. Its description reads the same under every
    /// transport: `The network connection was lost (URLError -1005: Recv failure: Connection
    /// reset by peer) for https://api.example.com/feed?token=<redacted>` — what happened, the
    /// code and the transport's own account, and the URL with its credentials masked
    /// (``Redaction/credentials``).
    case transport(URLError)
    /// No data arrived within the request's `timeoutInterval`.
    case timedOut
    /// The request was cancelled, by `cancel()`, `cancelAllRequests()` or Swift task cancellation.
    case cancelled
    /// `loadCache()` found no usable cached response, for the given reason.
    case cacheMiss(CacheMissReason)
    /// The response could not be decoded into the requested `Decodable` type; the payload
    /// names the type and the failing coding path.
    case decoding(String)
    /// The server answered with a 2xx status, but its body reports an error, as an interceptor's
    /// ``RequestInterceptor/validate(_:for:)`` found (an expired token, a captcha, a rate limit).
    case api(APIError)
    /// A disk operation failed: the cache or a download could not create, write, move or read a
    /// file. The payload names the file and the system's reason.
    case fileSystem(String)
    /// The body grew past the allowed maximum size, in bytes, which the payload gives.
    case responseTooLarge(Int)
    /// A redirect Errand will not follow — HTTPS to HTTP, a loop, too many — and why, with the URLs.
    case redirectRefused(String)
    /// The WebSocket was closed with a code other than a normal end's: by the server, or by the
    /// client because the server broke the protocol (1002, 1007). `reason` is the close frame's,
    /// or what the server broke.
    case webSocketClosed(code: WebSocketCloseCode, reason: String)

    /// Why a cached response could not be served.
    public enum CacheMissReason: String, Sendable, Equatable, CaseIterable {
        /// The request does not cache (`cacheTimeInSeconds <= 0`).
        case disabled
        /// Nothing is stored for the request.
        case missing
        /// The stored entry could not be read or is corrupt.
        case unreadable
        /// The entry is older than `cacheTimeInSeconds`.
        case expired
        /// The entry was stored under another `cacheVersion`.
        case versionMismatch
        /// The entry was stored with other `cacheSensitiveData`.
        case sensitiveDataMismatch
        /// The entry was stored under another `NetworkConfig.appVersion`.
        case appVersionMismatch
    }

    /// Whether the request failed to reach the server or hear back — what offline fallback covers —
    /// as opposed to an answer the server gave, a cancellation or a local mistake.
    var isNetworkFailure: Bool {
        switch self {
        case .transport, .timedOut: true
        default: false
        }
    }

    /// A short, stable name for the kind of failure, for metrics and traces (OpenTelemetry's
    /// `error.type`): the status of a refused response (`"503"`), else a word such as
    /// `"timeout"`, `"transport"` or `"cancelled"` — never the message, which may quote a URL
    /// and would make every failure a series of its own.
    public var typeName: String {
        switch self {
        case .statusCode(let code): "\(code)"
        case .invalidURL: "invalid_url"
        case .jsonValidation: "json_validation"
        case .serialization: "serialization"
        case .transport: "transport"
        case .timedOut: "timeout"
        case .cancelled: "cancelled"
        case .cacheMiss: "cache_miss"
        case .decoding: "decoding"
        case .api: "api"
        case .fileSystem: "file_system"
        case .responseTooLarge: "response_too_large"
        case .redirectRefused: "redirect_refused"
        case .webSocketClosed: "websocket_closed"
        }
    }

    /// Whether the status code validator refused the response: an answer all the same, which an
    /// HTTP cache stores if RFC 9111 allows.
    var isStatusCode: Bool {
        if case .statusCode = self { return true }
        return false
    }

    /// This error, or a transport error that names no URL given `url` as its `failingURL`: a
    /// transport names the URL a request failed for, whichever of its paths made the error.
    func naming(_ url: URL) -> ErrandError {
        guard case .transport(let error) = self, TransportFailureText.failingURL(of: error) == nil else { return self }
        var userInfo = error.userInfo
        userInfo[NSURLErrorFailingURLErrorKey] = url
        return .transport(URLError(error.code, userInfo: userInfo))
    }

    /// Maps a transport's `URLError` to the case a caller switches on.
    init(_ error: URLError) {
        switch error.code {
        case .timedOut: self = .timedOut
        case .cancelled: self = .cancelled
        default: self = .transport(error)
        }
    }
}

extension ErrandError: CustomStringConvertible {
    /// One sentence saying what failed, with the URL or value involved where there is one.
    public var description: String {
        switch self {
        case .invalidURL(let url):
            "Invalid URL: \"\(url)\""
        case .statusCode(let code):
            "Unacceptable HTTP status code \(code)"
        case .jsonValidation(let path, let expected, let found):
            "JSON validation failed at \(path): expected \(expected), found \(found)"
        case .serialization(let reason):
            "Serialization failed: \(reason)"
        case .transport(let error):
            TransportFailureText.describe(error)
        case .timedOut:
            "The request timed out"
        case .cancelled:
            "The request was cancelled"
        case .cacheMiss(let reason):
            "No usable cached response: \(reason.rawValue)"
        case .decoding(let reason):
            "Decoding failed: \(reason)"
        case .api(let error):
            "The API reported an error \(error.code): \(error.message)"
        case .fileSystem(let reason):
            "File system error: \(reason)"
        case .responseTooLarge(let limit):
            "The response body exceeded the maximum size of \(limit) bytes"
        case .redirectRefused(let reason):
            "Redirect refused: \(reason)"
        case .webSocketClosed(let code, let reason):
            "The WebSocket was closed with \(code)" + (reason.isEmpty ? "" : ": \(reason)")
        }
    }
}

extension ErrandError: LocalizedError {
    /// The same as ``description``, so `localizedDescription` says what failed rather than a generic message.
    public var errorDescription: String? { description }
}
