import Foundation

/// A fully built HTTP request, as plain values: what a ``Transport`` sends.
public struct TransportRequest: Sendable, Equatable {
    /// The absolute URL, query included.
    public var url: URL
    /// The method, such as `"GET"`.
    public var method: String
    /// The header fields to send.
    public var headers: [String: String]
    /// The body; `nil` for none.
    public var body: Data?
    /// Seconds to wait for data before failing with ``ErrandError/timedOut``.
    public var timeoutInterval: Double

    /// Creates a request.
    public init(
        url: URL, method: String = "GET", headers: [String: String] = [:], body: Data? = nil,
        timeoutInterval: Double = 60
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.timeoutInterval = timeoutInterval
    }

    /// The value of a header field, matched case-insensitively.
    public func value(forHeader name: String) -> String? {
        headers.headerField(name)
    }
}
