import Foundation

/// One HTTP client in the loopback benchmarks, used the way its documentation shows.
protocol LoopbackClient: Sendable {
    /// The row label in the table.
    var name: String { get }
    /// The last part of the benchmark name: `loopback.c16.<key>`.
    var key: String { get }
    /// Sends a tenth of `total` `GET`s of `url` unmeasured, then `total` measured, `inFlight` at
    /// a time, each started as soon as one ends.
    /// - Throws: at the first request that fails or answers other than 200.
    func measure(url: URL, total: Int, inFlight: Int) async throws -> LoopbackResult
    /// Lets go of what the client holds (connections, threads) once the benchmarks are done.
    func shutdown() async throws
}

extension LoopbackClient {
    func shutdown() async throws {}
}

/// One client's numbers at one concurrency in one round.
struct LoopbackResult: Sendable {
    let requestsPerSecond: Double
    /// User and system CPU time of the whole process over the measured requests, per request:
    /// the client's alone, as the server runs in another process.
    let cpuMicrosecondsPerRequest: Double
    let medianLatencyMicroseconds: Double

    /// Runs `requests(total / 10)` unmeasured, so that connections, threads and pools are warm,
    /// then `requests(total)` timed; `requests` returns each request's latency.
    static func measure(total: Int, _ requests: (Int) async throws -> [Duration]) async throws -> LoopbackResult {
        _ = try await requests(max(1, total / 10))
        let clock = ContinuousClock()
        let began = clock.now
        let cpu = ProcessCPU.now()
        let latencies = try await requests(total).sorted()
        let seconds = (clock.now - began).microseconds / 1e6
        return LoopbackResult(
            requestsPerSecond: Double(total) / seconds,
            cpuMicrosecondsPerRequest: (ProcessCPU.now() - cpu).microseconds / Double(total),
            medianLatencyMicroseconds: latencies.isEmpty ? .nan : latencies[latencies.count / 2].microseconds)
    }
}
