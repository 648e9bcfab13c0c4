import Errand
import ErrandTestServer
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Real HTTP over 127.0.0.1 — `GET /small-json`, a fixed small JSON body the server does not
/// have to encode, so its cost does not hide the client's — side by side in one run at 1, 16 and 64 requests in flight:
/// URLSession on its own, Errand on ``URLSessionTransport``, Errand on ``CurlTransport`` (with
/// closures, and with `async`/`await`), and
/// ``CurlTransport`` driven directly (no agent), so that both the transport and what the agent
/// adds on top show — and libcurl with nothing of Errand around it (``BareCurl``: an easy-handle
/// loop at 1 in flight, a multi handle at each), the floor Errand on libcurl is read against.
///
/// The server runs in a child process, so `cpu/op` is the client's alone; it still shares the
/// two cores with the client, and every row pays that equally.
enum LoopbackBenchmarks {
    /// The clients compared, in the order each concurrency runs them.
    enum Client: String, CaseIterable {
        case urlsession
        case errandURLSession = "errand-urlsession"
        case errandCurl = "errand-curl"
        /// Errand on ``CurlTransport`` awaited with `async`/`await` rather than called back.
        case errandCurlAsync = "errand-curl-async"
        case curlTransport = "curl-transport"
        case bareCurlEasy = "bare-curl-easy"
        case bareCurlMulti = "bare-curl-multi"

        /// libcurl alone, not Errand: a baseline, not a client compared with URLSession.
        var isBareCurl: Bool { self == .bareCurlEasy || self == .bareCurlMulti }
    }

    static let concurrencies = [1, 16, 64]

    static func name(_ client: Client, inFlight: Int) -> String {
        "loopback.\(client.rawValue).c\(inFlight)"
    }

    /// The clients run at `inFlight`: a blocking easy-handle loop has only ever one request in flight.
    static func clients(inFlight: Int) -> [Client] {
        Client.allCases.filter { $0 != .bareCurlEasy || inFlight == 1 }
    }

    static let names = concurrencies.flatMap { inFlight in
        clients(inFlight: inFlight).map { name($0, inFlight: inFlight) }
    }

    /// How much of bare libcurl's throughput Errand on libcurl keeps, one line per concurrency
    /// measured: Errand's req/s ÷ bare libcurl's, and its CPU per request ÷ bare libcurl's.
    static func bareCurlSummary(_ results: [String: Measurement]) -> [String] {
        concurrencies.compactMap { inFlight in
            let pairs = [Client.errandCurl, .errandCurlAsync, .curlTransport].flatMap { errand in
                clients(inFlight: inFlight).filter(\.isBareCurl).compactMap { bare -> String? in
                    guard let measured = results[name(errand, inFlight: inFlight)],
                        let baseline = results[name(bare, inFlight: inFlight)], baseline.throughput > 0,
                        baseline.cpuPerOperation > 0
                    else { return nil }
                    return String(
                        format: "%@ ÷ %@ %.2f× req/s, %.2f× cpu/op", errand.rawValue, bare.rawValue,
                        measured.throughput / baseline.throughput, measured.cpuPerOperation / baseline.cpuPerOperation)
                }
            }
            return pairs.isEmpty ? nil : "c\(inFlight): " + pairs.joined(separator: "; ")
        }
    }

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
            for client in Self.clients(inFlight: inFlight) where plan.includes(name(client, inFlight: inFlight)) {
                let benchmark = name(client, inFlight: inFlight)
                progress(benchmark)
                let (total, warmup) = plan.counts(default: inFlight == 1 ? 3_000 : 6_000)
                results.append(
                    try await clients.measure(client, benchmark, total: total, warmup: warmup, inFlight: inFlight))
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

        func measure(
            _ client: Client, _ benchmark: String, total: Int, warmup: Int, inFlight: Int
        ) async throws -> Measurement {
            let start: @Sendable (@escaping Outcome) -> Void
            switch client {
            case .bareCurlEasy:
                return try await BareCurl.easy(benchmark, url: url.absoluteString, total: total, warmup: warmup)
            case .bareCurlMulti:
                return try await BareCurl.multi(
                    benchmark, url: url.absoluteString, total: total, warmup: warmup, inFlight: inFlight)
            case .urlsession:
                start = { [session, url] done in
                    session.dataTask(with: URLRequest(url: url, timeoutInterval: 10)) { _, response, error in
                        let status = (response as? HTTPURLResponse)?.statusCode
                        done(
                            error.map { "URLSession GET \(url.path) failed: \($0)" }
                                ?? (status == 200 ? nil : "GET \(url.path) answered \(status ?? 0)"))
                    }.resume()
                }
            case .errandURLSession:
                start = { [urlSessionAgent] done in urlSessionAgent.start(SmallJSONGet(), outcome: done) }
            case .errandCurl:
                start = { [curlAgent] done in curlAgent.start(SmallJSONGet(), outcome: done) }
            case .errandCurlAsync:
                return try await Load.async(benchmark, total: total, warmup: warmup, inFlight: inFlight) {
                    [curlAgent] in
                    _ = try await curlAgent.response(SmallJSONGet())
                }
            case .curlTransport:
                start = { [curlTransport, url] done in
                    _ = curlTransport.send(TransportRequest(url: url, timeoutInterval: 10)) { event in
                        guard case .completed(let error) = event else { return }
                        done(error.map { "CurlTransport GET \(url.path) failed: \($0)" })
                    }
                }
            }
            return try await Load.callbacks(benchmark, total: total, warmup: warmup, inFlight: inFlight, start: start)
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
