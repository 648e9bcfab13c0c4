import Errand
import Foundation

/// 64 concurrent `GET /small-json` over TLS to one host, through ``CurlTransport`` under a
/// `NetworkAgent`, two ways against the same server in one run: HTTP/2 (``HTTPVersionPreference/automatic``,
/// which negotiates it by ALPN and sends every request over one shared connection) and HTTP/1.1
/// (``HTTPVersionPreference/http1_1``, at most 6 connections to the host, so that 58 of the 64
/// wait for a free connection at any time).
///
/// The server is not embedded: it must speak HTTP/2 and HTTP/1.1 over TLS, so it is a real one
/// started beforehand — `Benchmarks/h2-server.sh start` starts nginx and prints the variables —
/// and named by `ERRAND_BENCH_H2_URL` (scheme, host and port; it must serve `GET /small-json`)
/// and `ERRAND_BENCH_H2_CA` (the PEM of the CA that signed its certificate; unset, the system's
/// roots). Without `ERRAND_BENCH_H2_URL` the group is skipped and says so.
///
/// The two clients alternate, round after round, each with its own transport kept for the whole
/// run, and every request's ``RequestTask/metrics`` is read: a request whose
/// ``TransportMetrics/isReusedConnection`` is `false` opened a connection, so their count over
/// the run is the connections opened. The server runs in another process, so `cpu/op` is the
/// client's alone.
enum ConnectionBenchmarks {
    /// The two ways of sending the same requests.
    enum Variant: String, CaseIterable, Sendable {
        case http2 = "h2"
        case http1 = "http1_1x6"

        /// What every response's ``TransportMetrics/httpVersion`` must say.
        var expectedVersion: String {
            switch self {
            case .http2: "HTTP/2"
            case .http1: "HTTP/1.1"
            }
        }

        var connection: ConnectionOptions {
            var options = ConnectionOptions()
            switch self {
            case .http2:
                options.httpVersion = .automatic
            case .http1:
                options.httpVersion = .http1_1
                options.maximumConnectionsPerHost = 6
            }
            return options
        }
    }

    static let urlVariable = "ERRAND_BENCH_H2_URL"
    static let caVariable = "ERRAND_BENCH_H2_CA"
    static let inFlight = 64
    static let rounds = 3

    static func name(_ variant: Variant) -> String {
        "connection.\(variant.rawValue).c\(inFlight)"
    }

    static let names = Variant.allCases.map(name)

    /// One variant's rounds.
    struct Row: Sendable {
        let name: String
        let version: String
        let rounds: [Measurement]
        /// Connections opened during each round, its warm-up included.
        let openedPerRound: [Int]
        /// Requests whose metrics did not say whether they reused a connection.
        let unknown: Int

        var opened: Int { openedPerRound.reduce(0, +) }
    }

    struct Report: Sendable {
        var rows: [Row] = []
        /// Why the group did not run, when it was asked for and could not.
        var skipped: String?
    }

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> Report {
        let variants = Variant.allCases.filter { plan.includes(name($0)) }
        guard !variants.isEmpty else { return Report() }
        let environment = ProcessInfo.processInfo.environment
        guard let base = environment[urlVariable], !base.isEmpty else {
            return Report(
                skipped: "connection: skipped; set \(urlVariable) (and \(caVariable)) to run it: "
                    + "eval \"$(Benchmarks/h2-server.sh start)\" starts a local nginx and prints them")
        }
        let roots = environment[caVariable].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
        let clients = variants.map { Client(variant: $0, baseURL: base, trustedRoots: roots) }
        var measurements = Array(repeating: [Measurement](), count: clients.count)
        var opened = Array(repeating: [Int](), count: clients.count)
        let (total, warmup) = plan.counts(default: 20_000)
        for round in 1...rounds {
            for (index, client) in clients.enumerated() {
                progress("\(name(client.variant)) round \(round) of \(rounds)")
                let before = client.counter.opened
                measurements[index].append(
                    try await Load.callbacks(
                        name(client.variant), total: total, warmup: warmup, inFlight: inFlight, start: client.start))
                opened[index].append(client.counter.opened - before)
                if let wrong = client.counter.unexpectedVersion {
                    throw BenchmarkError(
                        description: "\(name(client.variant)): a response came over \(wrong), not "
                            + "\(client.variant.expectedVersion); does \(base) offer both over TLS (ALPN)?")
                }
            }
        }
        return Report(
            rows: clients.indices.map { index in
                Row(
                    name: name(clients[index].variant), version: clients[index].variant.expectedVersion,
                    rounds: measurements[index], openedPerRound: opened[index], unknown: clients[index].counter.unknown)
            })
    }

    /// The report's table, and how HTTP/2 compares with HTTP/1.1.
    static func table(_ report: Report) -> String {
        if let skipped = report.skipped { return skipped }
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[(sorted.count - 1) / 2]
        }
        func perRound(_ values: [Double], _ format: (Double) -> String) -> String {
            values.map(format).joined(separator: ", ")
        }
        func perSecond(_ value: Double) -> String { String(format: "%.0f", value) }
        func microseconds(_ nanoseconds: Double) -> String { String(format: "%.1f", nanoseconds / 1e3) }
        var lines = [
            "\(inFlight) GETs in flight over TLS, \(report.rows.first?.rounds.first?.operations ?? 0) per round, "
                + "\(rounds) alternating rounds; the last five columns are the rounds' medians", "",
            Format.table(
                header: [
                    "benchmark", "protocol", "connections opened (per round)", "req/s (per round)",
                    "cpu µs/request (per round)", "req/s", "cpu/request", "latency", "p90", "p99",
                ],
                rows: report.rows.map { row in
                    let throughputs = row.rounds.map(\.throughput)
                    let cpu = row.rounds.map(\.cpuPerOperation)
                    return [
                        row.name, row.version,
                        "\(row.opened) (\(row.openedPerRound.map(String.init).joined(separator: ", ")))"
                            + (row.unknown > 0 ? ", \(row.unknown) unknown" : ""),
                        perRound(throughputs, perSecond), perRound(cpu, microseconds),
                        Format.rate(median(throughputs)), Format.duration(nanoseconds: median(cpu)),
                        Format.duration(nanoseconds: median(row.rounds.map(\.median))),
                        Format.duration(nanoseconds: median(row.rounds.map(\.p90))),
                        Format.duration(nanoseconds: median(row.rounds.map { $0.percentile(99) })),
                    ]
                }),
        ]
        if let http2 = report.rows.first(where: { $0.name == name(.http2) }),
            let http1 = report.rows.first(where: { $0.name == name(.http1) })
        {
            let rate2 = median(http2.rounds.map(\.throughput))
            let rate1 = median(http1.rounds.map(\.throughput))
            let cpu2 = median(http2.rounds.map(\.cpuPerOperation))
            let cpu1 = median(http1.rounds.map(\.cpuPerOperation))
            lines.append(
                "  HTTP/2 vs HTTP/1.1 × 6: \(String(format: "%.2f", rate1 > 0 ? rate2 / rate1 : 0))× the throughput, "
                    + "\(cpu2 < cpu1 ? "-" : "+")\(Format.duration(nanoseconds: abs(cpu2 - cpu1))) CPU per request, "
                    + "\(http2.opened) connection\(http2.opened == 1 ? "" : "s") against \(http1.opened)")
        }
        return lines.joined(separator: "\n")
    }

    /// An agent on its own ``CurlTransport``, and what its responses' metrics said.
    private struct Client: Sendable {
        let variant: Variant
        let agent: NetworkAgent
        let counter = ConnectionCounter()

        init(variant: Variant, baseURL: String, trustedRoots: URL?) {
            self.variant = variant
            var connection = variant.connection
            if let trustedRoots { connection.trustedRoots = .adding([trustedRoots]) }
            let config = NetworkConfig()
            config.baseUrl = baseURL
            config.callbackQueue = DispatchQueue(label: "ErrandBenchmarks.connection.callbacks")
            agent = NetworkAgent(config: config, transport: CurlTransport(connection: connection))
            agent.maxConcurrentRequests = ConnectionBenchmarks.inFlight
        }

        var start: @Sendable (@escaping Outcome) -> Void {
            { [agent, counter, variant] done in
                agent.start(
                    SmallJSONOverTLS(),
                    success: { task in
                        counter.record(task.metrics, expecting: variant.expectedVersion)
                        done(nil)
                    },
                    failure: { task in
                        let error = task.error.map { "\($0)" } ?? "no error recorded"
                        done("GET \(SmallJSONOverTLS.path) failed: \(error)")
                    })
            }
        }
    }
}

/// Counts the requests that opened a connection, by their metrics. `@unchecked Sendable` because
/// every mutable field is guarded by `lock`.
private final class ConnectionCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var openedCount = 0
    private var unknownCount = 0
    private var wrongVersion: String?

    var opened: Int { lock.withLock { openedCount } }
    var unknown: Int { lock.withLock { unknownCount } }
    /// The first HTTP version seen that was not the one expected.
    var unexpectedVersion: String? { lock.withLock { wrongVersion } }

    func record(_ metrics: TransportMetrics?, expecting version: String) {
        lock.withLock {
            switch metrics?.isReusedConnection {
            case false?: openedCount += 1
            case true?: break
            case nil: unknownCount += 1
            }
            if let seen = metrics?.httpVersion, seen != version, wrongVersion == nil { wrongVersion = seen }
        }
    }
}

/// `GET /small-json`, parsed as JSON like any API response.
private struct SmallJSONOverTLS: BaseRequest {
    static let path = "/small-json"
    var url: String { Self.path }
    // A hung request fails the benchmark in seconds instead of the default minute.
    var timeoutInterval: TimeInterval { 10 }
    // Every call must reach the server: identical GETs in flight would otherwise share one response.
    var coalescesDuplicates: Bool { false }
}
