import Errand
import ErrandTestServer
import Foundation

/// An expired 100 KiB cache entry fetched again over loopback from a child server: revalidated
/// (a `304` answered with the stored body) against downloaded in full (the same resource
/// without a validator). Both store the entry again. The client's CPU is the process's; the
/// bytes are what the loopback interface carried per request, both directions, TCP/IP headers
/// included, read from `/sys/class/net/lo/statistics` — so nothing else should use loopback
/// meanwhile.
enum RevalidationBenchmarks {
    static let names = ["cache.revalidated-100k.async", "cache.refetched-100k.async"]

    /// The resources ``ServerProcess`` serves for these benchmarks: the same body, with an
    /// `ETag` and without.
    static let resources = [
        ("revalidated-100k", CacheableResource(body: body, etag: #""bench-1""#)),
        ("refetched-100k", CacheableResource(body: body)),
    ]

    private static let body = String(repeating: "0123456789abcdef", count: 100 * 1024 / 16)

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Measurement] {
        guard names.contains(where: plan.includes) else { return [] }
        let server = try ServerProcess()
        defer { server.stop() }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-benchmarks-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var results: [Measurement] = []
        for (resource, _) in resources {
            let name = "cache.\(resource).async"
            guard plan.includes(name) else { continue }
            progress(name)
            let agent = makeAgent(baseURL: server.baseURL, directory: directory)
            let request = ExpiringRequest(url: "/http-cache/\(resource)")
            _ = try await agent.response(request)
            let (total, warmup) = plan.counts(default: 2_000)
            let bytesBefore = loopbackBytes()
            let measurement = try await Load.async(name, total: total, warmup: warmup, inFlight: 1) {
                let response = try await agent.response(request)
                guard !response.isDataFromCache, response.data.count == body.utf8.count else {
                    throw BenchmarkError(description: "\(name): not a network answer of the whole body")
                }
            }
            if let before = bytesBefore, let after = loopbackBytes() {
                let perRequest = Double(after - before) / Double(total + warmup)
                let line = "    \(name): \(Int(perRequest)) bytes on loopback per request\n"
                FileHandle.standardError.write(Data(line.utf8))
            }
            await agent.waitForCacheWrites()
            results.append(measurement)
        }
        return results
    }

    /// An agent whose cache clock runs a billion times faster than the wall clock: each entry has
    /// expired by the time the next request looks, however soon.
    private static func makeAgent(baseURL: String, directory: URL) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = baseURL
        config.cacheDirectory = directory
        config.callbackQueue = DispatchQueue(label: "ErrandBenchmarks.revalidation.callbacks")
        config.cacheClock = { Date(timeIntervalSince1970: ProcessInfo.processInfo.systemUptime * 1e9) }
        return NetworkAgent(config: config, transport: CurlTransport())
    }

    /// Bytes the loopback interface has sent; `nil` where Linux's statistics are not there.
    private static func loopbackBytes() -> Int? {
        (try? String(contentsOfFile: "/sys/class/net/lo/statistics/tx_bytes", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
    }
}

/// A request whose entry lives a minute: under ``RevalidationBenchmarks``' clock, expired at once.
private struct ExpiringRequest: BaseRequest {
    let url: String
    var cacheTimeInSeconds: Int { 60 }
    var responseSerializerType: ResponseSerializerType { .data }
}
