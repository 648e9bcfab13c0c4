import Foundation

/// HTTP/1.1 over 127.0.0.1, keep-alive: `GET /small-json` (a fixed 69-byte JSON document) from the
/// root package's test server in a child process — the server and the endpoint the root's
/// `loopback.*` rows use — so the CPU measured is the client's alone. Every client at 1, 16 and
/// 64 requests in flight, alternating in one process, the order flipped every round.
enum LoopbackSuite {
    static let concurrencies = [1, 16, 64]
    /// The clients' keys, in the order odd rounds run them.
    static let keys = ["errand-async", "errand-closures", "ahc-shared", "ahc-1-loop", "urlsession", "bare-curl-multi"]

    static func name(inFlight: Int, key: String) -> String { "loopback.c\(inFlight).\(key)" }

    static let names = concurrencies.flatMap { inFlight in keys.map { name(inFlight: inFlight, key: $0) } }

    static func run(_ plan: Plan, server: ServerProcess) async throws {
        guard names.contains(where: plan.includes) else { return }
        guard let url = URL(string: server.httpBase + "/small-json") else {
            throw PeerError("the test server's address \(server.httpBase) is not a URL")
        }
        let agent = ErrandLoopbackClient.makeAgent(baseURL: server.httpBase)
        let clients: [any LoopbackClient] = [
            ErrandLoopbackClient(style: .async, agent: agent),
            ErrandLoopbackClient(style: .closures, agent: agent),
            AHCLoopbackClient.shared(),
            AHCLoopbackClient.oneLoop(),
            URLSessionLoopbackClient(),
            BareCurlBaseline(executable: plan.server),
        ]
        precondition(clients.map(\.key) == keys, "LoopbackSuite.keys must name the clients in order")

        var results: [Int: [String: [LoopbackResult]]] = [:]
        var failure: (any Error)?
        do {
            for round in 1...plan.rounds {
                for inFlight in concurrencies {
                    for client in round % 2 == 1 ? clients : clients.reversed()
                    where plan.includes(name(inFlight: inFlight, key: client.key)) {
                        progress("\(name(inFlight: inFlight, key: client.key)): round \(round) of \(plan.rounds)")
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
        report(results, clients: clients, plan: plan)
    }

    private static func report(_ results: [Int: [String: [LoopbackResult]]], clients: [any LoopbackClient], plan: Plan)
    {
        print(
            "HTTP loopback peers: GET /small-json, keep-alive HTTP/1.1, \(plan.requests) requests per client per round "
                + "after \(max(1, plan.requests / 10)) unmeasured; median of \(plan.rounds) alternating rounds [each round]"
        )
        for inFlight in concurrencies {
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
