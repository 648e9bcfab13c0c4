/// Takes part in every attempt of a request: adapts it before it is sent, checks the response
/// after the built-in validation, and decides whether a failed attempt is retried.
///
/// Interceptors come from ``NetworkConfig/interceptors`` (unless the request's
/// ``BaseRequest/usesConfigInterceptors`` is `false`), then from ``BaseRequest/interceptors``.
/// `adapt` and `validate` run in that order; for `retry`, the first decision other than
/// ``RetryDecision/doNotRetry`` wins. Every method has a default that does nothing.
///
/// ```swift
/// struct SigningInterceptor: RequestInterceptor {
///     let secret: String
///     func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest {
///         var signed = request
///         signed.headers["X-Signature"] = sign(request.url, secret)
///         return signed
///     }
/// }
/// ```
public protocol RequestInterceptor: Sendable {
    /// Called before every attempt — after URL building, filters and encoding — to add a token
    /// or sign the URL. Throwing fails the request with that error, without a retry.
    /// Default: returns `request` unchanged.
    func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest

    /// Called after the status code and `jsonValidator` accepted a response: throw
    /// ``ErrandError/api(_:)`` for an error reported inside a 2xx body. Default: accepts.
    func validate(_ response: Response, for task: RequestTask) throws(ErrandError)

    /// Called after an attempt failed with `error` (never for ``ErrandError/cancelled``): what to
    /// do next. The failed attempt's response, if any, is ``RequestTask/response``. Never called
    /// for a request whose body was streamed (``UploadBody/stream(_:length:)``), which cannot be
    /// sent again. Default: ``RetryDecision/doNotRetry``.
    func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision
}

extension RequestInterceptor {
    /// Returns `request` unchanged.
    public func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest
    {
        request
    }

    /// Accepts every response.
    public func validate(_ response: Response, for task: RequestTask) throws(ErrandError) {}

    /// Never retries.
    public func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision {
        .doNotRetry
    }
}
