import Errand
import ErrandTestServer
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Real HTTP over 127.0.0.1 through ``URLSessionTransport``, beside URLSession on its own
/// against the same server, so the difference is what Errand adds to a request users send.
///
/// The server runs in this process and shares the CPU with the client, so these numbers are
/// lower than against a server elsewhere; both rows of a pair pay that equally.
enum LoopbackBenchmarks {
    static let names = [
        "loopback.urlsession.sequential", "loopback.errand.sequential",
        "loopback.urlsession.16-in-flight", "loopback.errand.16-in-flight",
    ]

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Measurement] {
        guard names.contains(where: plan.includes) else { return [] }
        let server = try TestServer()
        defer { server.stop() }
        guard let url = URL(string: server.baseURL + "/get") else {
            throw BenchmarkError(description: "the test server's address \(server.baseURL) is not a URL")
        }

        let session = URLSession(configuration: .default)
        defer { session.finishTasksAndInvalidate() }

        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "ErrandBenchmarks.loopback.callbacks")
        let agent = NetworkAgent(config: config)
        agent.maxConcurrentRequests = 16

        let plain: @Sendable (@escaping Outcome) -> Void = { done in
            session.dataTask(with: URLRequest(url: url, timeoutInterval: 10)) { _, response, error in
                let status = (response as? HTTPURLResponse)?.statusCode
                done(
                    error.map { "URLSession GET /get failed: \($0)" }
                        ?? (status == 200 ? nil : "GET /get answered \(status ?? 0)"))
            }.resume()
        }
        let errand: @Sendable (@escaping Outcome) -> Void = { done in
            agent.start(HTTPBinGet(), outcome: done)
        }

        var results: [Measurement] = []
        for (index, name) in names.enumerated() where plan.includes(name) {
            progress(name)
            let inFlight = index < 2 ? 1 : 16
            let (total, warmup) = plan.counts(default: inFlight == 1 ? 2_000 : 4_000)
            results.append(
                try await Load.callbacks(
                    name, total: total, warmup: warmup, inFlight: inFlight, start: index % 2 == 0 ? plain : errand))
        }
        return results
    }
}
