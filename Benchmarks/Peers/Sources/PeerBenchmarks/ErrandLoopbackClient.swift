import Errand
import Foundation

/// Errand as the root package's `loopback.errand-curl*` rows use it: a `NetworkAgent` on
/// `CurlTransport` (6 connections per host, the default), `maxConcurrentRequests = 64`, callbacks
/// on a queue of their own, the JSON body parsed as any API response is, and request coalescing
/// off so that every call reaches the server, as every peer's does.
struct ErrandLoopbackClient: LoopbackClient {
    /// How the caller waits.
    enum Style: String, Sendable {
        /// `try await agent.response(_:)`, as `errand-curl-async` does.
        case async
        /// `agent.start(_:success:failure:)`, as `errand-curl` does.
        case closures
    }

    let style: Style
    let agent: NetworkAgent

    var name: String { "Errand, \(style.rawValue)" }
    var key: String { "errand-\(style.rawValue)" }

    /// One agent for both styles, as in the root benchmarks; `trustedRoots`, a PEM file of the
    /// CA that signed a local TLS server's certificate.
    static func makeAgent(baseURL: String, trustedRoots: URL? = nil) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = baseURL
        config.callbackQueue = DispatchQueue(label: "PeerBenchmarks.loopback.callbacks")
        var connection = ConnectionOptions()
        if let trustedRoots { connection.trustedRoots = .adding([trustedRoots]) }
        let agent = NetworkAgent(config: config, transport: CurlTransport(connection: connection))
        agent.maxConcurrentRequests = 64
        return agent
    }

    func measure(url: URL, total: Int, inFlight: Int) async throws -> LoopbackResult {
        try await LoopbackResult.measure(total: total) { count in
            try await run(url: url, total: count, inFlight: inFlight)
        }
    }

    private func run(url: URL, total: Int, inFlight: Int) async throws -> [Duration] {
        let request = SmallJSONGet(url: url.path)
        switch style {
        case .async:
            return try await Load.async(total: total, inFlight: inFlight) { [agent] in
                _ = try await agent.response(request)
            }
        case .closures:
            return try await Load.callbacks(total: total, inFlight: inFlight) { [agent] done in
                agent.start(
                    request, success: { _ in done(nil) },
                    failure: { task in done("Errand GET \(request.url) failed: \(task.error.map { "\($0)" } ?? "?")") })
            }
        }
    }
}

/// `GET /small-json`, parsed as JSON like any API response.
private struct SmallJSONGet: BaseRequest {
    let url: String
    // A hung request fails the benchmark in seconds instead of the default minute.
    var timeoutInterval: TimeInterval { 10 }
    // Every call must reach the server, as every peer's does: none shares identical requests.
    var coalescesDuplicates: Bool { false }
}
