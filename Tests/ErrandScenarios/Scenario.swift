import Errand
import Foundation
import Testing

/// One integration scenario, run by the loopback suite against `ErrandTestServer` and by the
/// interop suite against a real httpbin, so both servers are held to the same behaviour.
public struct Scenario: Sendable, CustomTestStringConvertible {
    public let name: String
    let body: @Sendable (ScenarioServer) async throws -> Void

    init(_ name: String, body: @escaping @Sendable (ScenarioServer) async throws -> Void) {
        self.name = name
        self.body = body
    }

    public var testDescription: String { name }

    /// Runs the scenario against the httpbin-compatible server at `baseURL`.
    public func run(baseURL: String) async throws {
        try await body(ScenarioServer(baseURL: baseURL))
    }
}

/// The server a scenario talks to, and a fresh agent pointed at it.
public struct ScenarioServer: Sendable {
    public let baseURL: String

    /// An agent of its own (so scenarios run in parallel) with callbacks on a private queue.
    public func makeAgent(maxConcurrentRequests: Int = 6) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = baseURL
        config.callbackQueue = DispatchQueue(label: "errand.scenario.callbacks")
        let agent = NetworkAgent(config: config)
        agent.maxConcurrentRequests = maxConcurrentRequests
        return agent
    }
}
