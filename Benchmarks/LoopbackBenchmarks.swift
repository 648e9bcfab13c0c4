import Errand
import ErrandTestServer
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Real HTTP over 127.0.0.1 — `GET /small-json`, a fixed small JSON body the server does not
/// have to encode, so its cost does not hide the client's — side by side in one run at 1, 16 and 64 requests in flight:
/// URLSession on its own, Errand on ``URLSessionTransport``, Errand on ``CurlTransport``, and
/// ``CurlTransport`` driven directly (no agent), so that both the transport and what the agent
/// adds on top show.
///
/// The server runs in a child process, so `cpu/op` is the client's alone; it still shares the
/// two cores with the client, and every row pays that equally.
enum LoopbackBenchmarks {
    /// The clients compared, in the order each concurrency runs them.
    enum Client: String, CaseIterable {
        case urlsession
        case errandURLSession = "errand-urlsession"
        case errandCurl = "errand-curl"
        case curlTransport = "curl-transport"
    }

    static let concurrencies = [1, 16, 64]

    static func name(_ client: Client, inFlight: Int) -> String {
        "loopback.\(client.rawValue).c\(inFlight)"
    }

    static let names = concurrencies.flatMap { inFlight in Client.allCases.map { name($0, inFlight: inFlight) } }

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Measurement] {
        guard names.contains(where: plan.includes) else { return [] }
        let server = try ServerProcess()
        defer { server.stop() }
        guard let url = URL(string: server.baseURL + SmallJSONGet.path) else {
            throw BenchmarkError(description: "the test server's address \(server.baseURL) is not a URL")
        }
        let clients = Clients(baseURL: server.baseURL, url: url)
        defer { clients.session.finishTasksAndInvalidate() }

        var results: [Measurement] = []
        for inFlight in concurrencies {
            for client in Client.allCases where plan.includes(name(client, inFlight: inFlight)) {
                let benchmark = name(client, inFlight: inFlight)
                progress(benchmark)
                let (total, warmup) = plan.counts(default: inFlight == 1 ? 3_000 : 6_000)
                results.append(
                    try await Load.callbacks(
                        benchmark, total: total, warmup: warmup, inFlight: inFlight, start: clients.start(client)))
            }
        }
        return results
    }

    /// One of each client, all against the same server.
    private struct Clients {
        let session = URLSession(configuration: .default)
        let urlSessionAgent: NetworkAgent
        let curlAgent: NetworkAgent
        let curlTransport = CurlTransport()
        let url: URL

        init(baseURL: String, url: URL) {
            self.url = url
            func agent(_ transport: any Transport) -> NetworkAgent {
                let config = NetworkConfig()
                config.baseUrl = baseURL
                config.callbackQueue = DispatchQueue(label: "ErrandBenchmarks.loopback.callbacks")
                let agent = NetworkAgent(config: config, transport: transport)
                agent.maxConcurrentRequests = 64
                return agent
            }
            urlSessionAgent = agent(URLSessionTransport())
            curlAgent = agent(CurlTransport())
        }

        func start(_ client: Client) -> @Sendable (@escaping Outcome) -> Void {
            switch client {
            case .urlsession:
                return { [session, url] done in
                    session.dataTask(with: URLRequest(url: url, timeoutInterval: 10)) { _, response, error in
                        let status = (response as? HTTPURLResponse)?.statusCode
                        done(
                            error.map { "URLSession GET \(url.path) failed: \($0)" }
                                ?? (status == 200 ? nil : "GET \(url.path) answered \(status ?? 0)"))
                    }.resume()
                }
            case .errandURLSession:
                return { [urlSessionAgent] done in urlSessionAgent.start(SmallJSONGet(), outcome: done) }
            case .errandCurl:
                return { [curlAgent] done in curlAgent.start(SmallJSONGet(), outcome: done) }
            case .curlTransport:
                return { [curlTransport, url] done in
                    _ = curlTransport.send(TransportRequest(url: url, timeoutInterval: 10)) { event in
                        guard case .completed(let error) = event else { return }
                        done(error.map { "CurlTransport GET \(url.path) failed: \($0)" })
                    }
                }
            }
        }
    }
}

/// `GET /small-json`, parsed as JSON like any API response.
private struct SmallJSONGet: BaseRequest {
    static let path = "/small-json"
    var url: String { Self.path }
    // A hung request fails the benchmark in seconds instead of the default minute.
    var timeoutInterval: TimeInterval { 10 }
    // Every call must reach the server to compare with URLSession and libcurl alone, which do not
    // share identical requests in flight.
    var coalescesDuplicates: Bool { false }
}
