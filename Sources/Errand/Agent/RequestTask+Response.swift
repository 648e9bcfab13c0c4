import Foundation

/// The parts of ``RequestTask/response`` YTKNetwork users read from the task itself.
extension RequestTask {
    /// The response status code; `0` until a response arrives.
    public var responseStatusCode: Int { response?.statusCode ?? 0 }

    /// The response header fields; empty until a response arrives.
    public var responseHeaders: [String: String] { response?.headers ?? [:] }

    /// The response body; `nil` until a response arrives.
    public var responseData: Data? { response?.data }

    /// The response body as text; see ``Response/string``.
    public var responseString: String? { response?.string }

    /// The response body parsed as JSON; see ``Response/jsonObject``.
    public var responseJSONObject: Any? { response?.jsonObject }

    /// Whether the response was served from the cache.
    public var isDataFromCache: Bool { response?.isDataFromCache ?? false }
}
