import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Retries what is worth retrying: an idempotent request that timed out, lost its connection or
/// got a status that means "try again later", with exponential backoff and jitter.
///
/// ```swift
/// NetworkConfig.shared.addInterceptor(RetryPolicy())
/// ```
/// A `Retry-After` header (seconds or an HTTP date) sets the delay instead, up to `maxDelay`.
/// POST and PATCH are not retried by default: the server may have acted on the first attempt.
/// A request whose body was streamed (``UploadBody/stream(_:length:)``) is never retried,
/// whatever its method: its body was consumed as it was sent.
public struct RetryPolicy: RequestInterceptor {
    /// Attempts in all, the first included.
    public let maxAttempts: Int
    /// The delay before the second attempt; each later one doubles it.
    public let baseDelay: TimeInterval
    /// The longest delay, `Retry-After` included.
    public let maxDelay: TimeInterval
    /// The methods that may be sent again.
    public let retryableMethods: Set<HTTPMethod>
    /// The status codes that mean "try again later".
    public let retryableStatusCodes: Set<Int>
    /// The clock an HTTP-date `Retry-After` is measured against.
    let now: @Sendable () -> Date

    /// Creates a policy.
    /// - Parameters:
    ///   - maxAttempts: Attempts in all, the first included. Default `3`.
    ///   - baseDelay: Seconds before the second attempt, doubled for each later one. Default `0.5`.
    ///   - maxDelay: The longest wait in seconds, `Retry-After` included. Default `30`.
    ///   - retryableMethods: Default GET, HEAD, PUT, DELETE, OPTIONS and TRACE, the idempotent ones.
    ///   - retryableStatusCodes: Default 408, 429, 500, 502, 503 and 504.
    public init(
        maxAttempts: Int = 3, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 30,
        retryableMethods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options, .trace],
        retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]
    ) {
        self.init(
            maxAttempts: maxAttempts, baseDelay: baseDelay, maxDelay: maxDelay, retryableMethods: retryableMethods,
            retryableStatusCodes: retryableStatusCodes, now: { Date() })
    }

    init(
        maxAttempts: Int, baseDelay: TimeInterval, maxDelay: TimeInterval, retryableMethods: Set<HTTPMethod>,
        retryableStatusCodes: Set<Int>, now: @escaping @Sendable () -> Date
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
        self.retryableMethods = retryableMethods
        self.retryableStatusCodes = retryableStatusCodes
        self.now = now
    }

    /// ``RetryDecision/retryAfter(_:)`` while attempts are left for a retryable method and error.
    public func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision {
        guard task.attemptCount < maxAttempts, isRetryable(error),
            let method = task.sentRequest.flatMap({ HTTPMethod(rawValue: $0.method.uppercased()) }),
            retryableMethods.contains(method)
        else { return .doNotRetry }
        if case .statusCode = error, let retryAfter = task.response?.value(forHeader: "Retry-After"),
            let seconds = Self.seconds(inRetryAfter: retryAfter, now: now())
        {
            return .retryAfter(min(seconds, maxDelay))
        }
        return .retryAfter(backoff(afterAttempt: task.attemptCount))
    }

    /// Whether `error` says the server or the network may do better next time.
    func isRetryable(_ error: ErrandError) -> Bool {
        switch error {
        case .statusCode(let code): retryableStatusCodes.contains(code)
        case .timedOut: true
        case .transport(let error): Self.connectionFailures.contains(error.code)
        default: false
        }
    }

    /// `baseDelay` doubled for each attempt made after the first, capped, and spread by jitter
    /// between half and all of it, so that clients that failed together do not retry together.
    func backoff(afterAttempt attempt: Int) -> TimeInterval {
        let exponential = baseDelay * pow(2, Double(max(0, attempt - 1)))
        let capped = min(exponential, maxDelay)
        return capped / 2 + Double.random(in: 0...(capped / 2))
    }

    /// The seconds a `Retry-After` value asks for: a number of seconds, or an HTTP date.
    static func seconds(inRetryAfter value: String, now: Date) -> TimeInterval? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) { return seconds >= 0 ? TimeInterval(seconds) : nil }
        guard let date = HTTPDate.parse(trimmed, now: now) else { return nil }
        return max(0, date.timeIntervalSince(now))
    }

    /// Connection failures: refused, dropped, unreachable, or (on Linux) closed mid-body or with an empty reply.
    private static let connectionFailures: Set<URLError.Code> = [
        .timedOut, .cannotConnectToHost, .networkConnectionLost, .notConnectedToInternet, .cannotFindHost,
        .dnsLookupFailed, .badServerResponse, .unknown,
    ]
}
