import Foundation

/// Keep-alive `GET /small-json` (a fixed JSON document), every client alternating in one
/// process, the order flipped every round, against a server in another process so that the CPU
/// measured is the client's alone:
///
/// - `loopback.cN.*`: HTTP/1.1 over 127.0.0.1 from the root package's test server — the server
///   and endpoint the root's `loopback.*` rows use — at 1, 16 and 64 in flight.
/// - `h2.c16.*`: HTTP/2 over TLS at 16 in flight, from the local nginx `Benchmarks/h2-server.sh`
///   starts (the root's `connection.*` rows use it too); it reads `ERRAND_BENCH_H2_URL` and
///   `ERRAND_BENCH_H2_CA`, and the rows are skipped, saying so, without them.
enum LoopbackSuite {
    /// One protocol's rows.
    private struct Target {
        let prefix: String
        let title: String
        let concurrencies: [Int]
        let keys: [String]

        func name(inFlight: Int, key: String) -> String { "\(prefix).c\(inFlight).\(key)" }
        var names: [String] { concurrencies.flatMap { inFlight in keys.map { name(inFlight: inFlight, key: $0) } } }
    }

    /// The clients' keys, in the order odd rounds run them.
    private static let http = Target(
        prefix: "loopback", title: "keep-alive HTTP/1.1", concurrencies: [1, 16, 64],
        keys: ["errand-async", "errand-closures", "ahc-shared", "ahc-1-loop", "urlsession", "bare-curl-multi"])
    private static let h2 = Target(
        prefix: "h2", title: "HTTP/2 over TLS (nginx)", concurrencies: [16],
        keys: ["errand-async", "ahc-shared", "ahc-1-loop"])

    static let names = http.names + h2.names

    static func run(_ plan: Plan, server: ServerProcess) async throws {
        guard http.names.contains(where: plan.includes) else { return }
        guard let url = URL(string: server.httpBase + "/small-json") else {
            throw PeerError("the test server's address \(server.httpBase) is not a URL")
        }
        let agent = ErrandLoopbackClient.makeAgent(baseURL: server.httpBase)
        try await measure(
            http, url: url, plan: plan,
            clients: [
                ErrandLoopbackClient(style: .async, agent: agent),
                ErrandLoopbackClient(style: .closures, agent: agent),
                AHCLoopbackClient.shared(),
                AHCLoopbackClient.oneLoop(),
                URLSessionLoopbackClient(),
                BareCurlBaseline(executable: plan.server),
            ])
    }

    static func runHTTP2(_ plan: Plan) async throws {
        guard h2.names.contains(where: plan.includes) else { return }
        let environment = ProcessInfo.processInfo.environment
        guard let base = environment["ERRAND_BENCH_H2_URL"], let ca = environment["ERRAND_BENCH_H2_CA"],
            let url = URL(string: base + "/small-json")
        else {
            progress("h2.*: skipped, no server: eval \"$(Benchmarks/h2-server.sh start)\" starts one")
            return
        }
        let trustedRoots = URL(fileURLWithPath: ca)
        let agent = ErrandLoopbackClient.makeAgent(baseURL: base, trustedRoots: trustedRoots)
        try await measure(
            h2, url: url, plan: plan,
            clients: [
                ErrandLoopbackClient(style: .async, agent: agent),
                AHCLoopbackClient.tls(trustedRoots: trustedRoots, oneLoop: false),
                AHCLoopbackClient.tls(trustedRoots: trustedRoots, oneLoop: true),
            ])
    }

    private static func measure(_ target: Target, url: URL, plan: Plan, clients: [any LoopbackClient]) async throws {
        guard clients.map(\.key) == target.keys else {
            throw PeerError("the \(target.prefix) clients are not the ones its keys name")
        }
        var results: [Int: [String: [LoopbackResult]]] = [:]
        var failure: (any Error)?
        do {
            for round in 1...plan.rounds {
                for inFlight in target.concurrencies {
                    for client in round % 2 == 1 ? clients : clients.reversed()
                    where plan.includes(target.name(inFlight: inFlight, key: client.key)) {
                        progress(
                            "\(target.name(inFlight: inFlight, key: client.key)): round \(round) of \(plan.rounds)")
                        let result = try await client.measure(url: url, total: plan.requests, inFlight: inFlight)
                        results[inFlight, default: [:]][client.key, default: []].append(result)
                    }
                }
            }
        } catch {
            failure = error
        }
        for client in clients { try await client.shutdown() }
        if let failure { throw failure }
        report(results, target: target, clients: clients, plan: plan)
    }

    private static func report(
        _ results: [Int: [String: [LoopbackResult]]], target: Target, clients: [any LoopbackClient], plan: Plan
    ) {
        print(
            "\(target.prefix) peers: GET /small-json, \(target.title), \(plan.requests) requests per client per round "
                + "after \(max(1, plan.requests / 10)) unmeasured; median of \(plan.rounds) alternating rounds [each round]"
        )
        for inFlight in target.concurrencies {
            guard let byClient = results[inFlight] else { continue }
            let baseline = byClient["errand-async"].map { median($0.map(\.requestsPerSecond)) }
            print()
            print("| c\(inFlight) | req/s | client CPU µs per request | median latency µs | req/s ÷ Errand async |")
            print("| --- | ---: | ---: | ---: | ---: |")
            for client in clients {
                guard let rounds = byClient[client.key] else { continue }
                let rates = rounds.map(\.requestsPerSecond)
                let ratio = baseline.map { String(format: "%.2f", median(rates) / $0) } ?? "n/a"
                print(
                    "| \(client.name) | \(cell(rates, "%.0f")) | \(cell(rounds.map(\.cpuMicrosecondsPerRequest), "%.1f")) "
                        + "| \(cell(rounds.map(\.medianLatencyMicroseconds), "%.0f")) | \(ratio) |")
            }
        }
        print()
    }
}

/// The median of `values` (the upper one of an even count); NaN for none.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

/// `median [each value]`, each written with `format`.
func cell(_ values: [Double], _ format: String) -> String {
    String(format: format, median(values)) + " [" + values.map { String(format: format, $0) }.joined(separator: ", ")
        + "]"
}
