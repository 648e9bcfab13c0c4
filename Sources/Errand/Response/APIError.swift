import Foundation

/// An error the server reported inside a successful (2xx) response body, such as
/// `{"error": {"code": 5, "message": "token expired"}}`.
///
/// An interceptor's ``RequestInterceptor/validate(_:for:)`` throws it as ``ErrandError/api(_:)``;
/// a ``RetryPolicy`` or ``AuthenticationInterceptor`` can then retry or refresh on it.
public struct APIError: Error, Sendable, Equatable {
    /// The server's error code, as text (`"5"`, `"token_expired"`).
    public var code: String
    /// The server's human-readable message.
    public var message: String
    /// The raw response body, so a caller can decode more from it (a captcha id, say).
    public var data: Data

    /// Creates an API error.
    public init(code: String, message: String, data: Data = Data()) {
        self.code = code
        self.message = message
        self.data = data
    }
}
