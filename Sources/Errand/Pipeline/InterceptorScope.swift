/// Marks the work an interceptor does on behalf of a request that holds one of the agent's
/// slots, such as refreshing a token with another request.
///
/// Requests started inside it skip the agent's concurrency limit: they are part of an attempt
/// that already counts against it, and waiting for a slot could wait for themselves — with every
/// slot held by requests waiting for the same token refresh, the refresh would never run.
enum InterceptorScope {
    @TaskLocal static var isActive = false
    /// Whether the interceptor running is one the request carries itself
    /// (``BaseRequest/interceptors``) rather than the configuration's: an
    /// ``AuthenticationInterceptor`` of the request's own authenticates the request where it
    /// goes, one of the configuration's only the configuration's origins.
    @TaskLocal static var isRequestsOwn = false
    /// The cookie jar of the account the interceptor works for: requests started inside it — a
    /// token refresh that logs in again with the account's session cookie — send and store that
    /// account's cookies rather than the configuration's.
    @TaskLocal static var cookieJar: CookieJar?

    static func run<Value>(requestsOwn: Bool, _ body: () async throws(ErrandError) -> Value)
        async throws(ErrandError) -> Value
    {
        do {
            return try await $isActive.withValue(true) {
                try await $isRequestsOwn.withValue(requestsOwn) { try await body() }
            }
        } catch let error as ErrandError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    static func run<Value>(requestsOwn: Bool, _ body: () async -> Value) async -> Value {
        await $isActive.withValue(true) { await $isRequestsOwn.withValue(requestsOwn) { await body() } }
    }
}
