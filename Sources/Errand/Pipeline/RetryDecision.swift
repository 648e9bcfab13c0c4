import Foundation

/// What a ``RequestInterceptor`` wants done after an attempt failed.
public enum RetryDecision: Sendable, Equatable {
    /// Send the request again now.
    case retry
    /// Send the request again after this many seconds; ``RequestTask/cancel()`` ends the wait at once.
    case retryAfter(TimeInterval)
    /// Let the failure stand; the next interceptor may still decide otherwise.
    case doNotRetry
    /// Fail the request with this error instead of the attempt's.
    case fail(ErrandError)
}
