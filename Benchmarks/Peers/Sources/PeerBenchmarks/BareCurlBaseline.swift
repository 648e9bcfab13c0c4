import Foundation

/// libcurl with nothing of Errand around it, the floor Errand on libcurl is read against: the
/// root package's `loopback.bare-curl-multi.cN` (one multi handle on one thread, N easy handles
/// each re-added as it finishes, CurlTransport's multi options: 6 connections per host), run by
/// the root's `ErrandBenchmarks` in a process of its own, in this row's turn of each round.
///
/// This package cannot compile that code: it calls libcurl through the root package's
/// `CErrandCurl` module, which is no product, and copying the shim here would be a second copy
/// to keep in step. So the child measures with the root harness — a tenth of the requests
/// unmeasured first, as here, then its own CPU over the measured ones — against a test server of
/// its own: the same binary serving the same `/small-json`, also in a process of its own.
struct BareCurlBaseline: LoopbackClient {
    let name = "bare libcurl, multi (root ErrandBenchmarks)"
    let key = "bare-curl-multi"
    /// The root package's `ErrandBenchmarks`.
    let executable: String

    func measure(url: URL, total: Int, inFlight: Int) async throws -> LoopbackResult {
        let benchmark = "loopback.bare-curl-multi.c\(inFlight)"
        let output = try await ChildProcess.output(
            executable, ["--only", benchmark, "--iterations", "\(total)"], quiet: true)
        // `name  ops  median  p90  throughput  cpu/op`, each figure a number and a unit.
        guard
            let row = output.split(separator: "\n").map({ $0.split(separator: " ") })
                .first(where: { $0.first.map(String.init) == benchmark }),
            row.count == 10,
            let median = Self.microseconds(row[2], row[3]),
            let rate = Self.perSecond(row[6], row[7]),
            let cpu = Self.microseconds(row[8], row[9])
        else {
            throw PeerError("\(executable) --only \(benchmark) printed no row to read:\n\(output)")
        }
        return LoopbackResult(
            requestsPerSecond: rate, cpuMicrosecondsPerRequest: cpu, medianLatencyMicroseconds: median)
    }

    /// `12.3` `µs` (or `ns`, `ms`), as the root's `Format.duration` writes it, in microseconds.
    private static func microseconds(_ value: Substring, _ unit: Substring) -> Double? {
        guard let number = Double(value) else { return nil }
        switch unit {
        case "ns": return number / 1e3
        case "µs": return number
        case "ms": return number * 1e3
        default: return nil
        }
    }

    /// `1.23` `k/s` (or `/s`, `M/s`), as the root's `Format.rate` writes it, per second.
    private static func perSecond(_ value: Substring, _ unit: Substring) -> Double? {
        guard let number = Double(value) else { return nil }
        switch unit {
        case "/s": return number
        case "k/s": return number * 1e3
        case "M/s": return number * 1e6
        default: return nil
        }
    }
}
