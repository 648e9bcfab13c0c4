/// One request's interceptors, in the order they run, as one stage of the pipeline.
struct InterceptorChain: Sendable {
    let interceptors: [any RequestInterceptor]
    /// Where the request's own interceptors start in ``interceptors``, after the config's.
    private let requestsOwnStart: Int

    var isEmpty: Bool { interceptors.isEmpty }

    /// The config's interceptors (unless the request opts out), then the request's own.
    init(request: any BaseRequest, config: NetworkConfig) {
        let configured = request.usesConfigInterceptors ? config.interceptors : []
        interceptors = configured + request.interceptors
        requestsOwnStart = configured.count
    }

    /// The accessories a task of `request` has: the configuration's, then its interceptors that
    /// are accessories too (an ``AuthenticationInterceptor`` binds a request to its account when
    /// it starts), then the request's own.
    static func accessories(of request: any BaseRequest, config: NetworkConfig) -> [any RequestAccessory] {
        let interceptors = (request.usesConfigInterceptors ? config.interceptors : []) + request.interceptors
        return config.requestAccessories + interceptors.compactMap { $0 as? any RequestAccessory }
            + request.requestAccessories
    }

    /// Each interceptor adapts the result of the one before.
    func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest {
        var request = request
        for (index, interceptor) in interceptors.enumerated() {
            request = try await InterceptorScope.run(requestsOwn: index >= requestsOwnStart) {
                () async throws(ErrandError) in try await interceptor.adapt(request, for: task)
            }
        }
        return request
    }

    func validate(_ response: Response, for task: RequestTask) throws(ErrandError) {
        for interceptor in interceptors {
            try interceptor.validate(response, for: task)
        }
    }

    /// The first decision other than ``RetryDecision/doNotRetry``.
    func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision {
        for (index, interceptor) in interceptors.enumerated() {
            let decision = await InterceptorScope.run(requestsOwn: index >= requestsOwnStart) {
                await interceptor.retry(task, dueTo: error)
            }
            if decision != .doNotRetry { return decision }
        }
        return .doNotRetry
    }
}
