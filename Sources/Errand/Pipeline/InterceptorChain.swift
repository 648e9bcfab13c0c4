/// One request's interceptors, in the order they run, as one stage of the pipeline.
struct InterceptorChain: Sendable {
    let interceptors: [any RequestInterceptor]

    var isEmpty: Bool { interceptors.isEmpty }

    /// The config's interceptors (unless the request opts out), then the request's own.
    init(request: any BaseRequest, config: NetworkConfig) {
        interceptors = (request.usesConfigInterceptors ? config.interceptors : []) + request.interceptors
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
        for interceptor in interceptors {
            request = try await InterceptorScope.run { () async throws(ErrandError) in
                try await interceptor.adapt(request, for: task)
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
        for interceptor in interceptors {
            let decision = await InterceptorScope.run { await interceptor.retry(task, dueTo: error) }
            if decision != .doNotRetry { return decision }
        }
        return .doNotRetry
    }
}
