import Errand
import Foundation

/// URL building and argument encoding on their own, away from queues and threads.
///
/// `buildRequestUrl` resolves the path against the base but leaves the arguments out, and no
/// public call encodes arguments alone, so their cost is measured as the difference between
/// the same request sent through the stub pipeline with ten arguments and with none.
enum EncodingBenchmarks {
    static let names = [
        "encoding.build-url", "encoding.foundation-url",
        "encoding.pipeline.no-arguments", "encoding.pipeline.10-arguments",
    ]

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Measurement] {
        let agent = makeStubAgent()
        var results: [Measurement] = []

        if plan.includes(names[0]) {
            progress(names[0])
            let request = SearchRequest()
            let (total, warmup) = plan.counts(default: 200_000)
            results.append(
                try Microbenchmark.measure(names[0], iterations: total, warmup: warmup, batch: min(100, total)) {
                    _ = try agent.buildRequestUrl(request)
                })
        }

        // The floor under buildRequestUrl: Foundation parsing the same two strings into a URL.
        if plan.includes(names[1]) {
            progress(names[1])
            let base = agent.config.baseUrl + "/"
            let (total, warmup) = plan.counts(default: 200_000)
            results.append(
                try Microbenchmark.measure(names[1], iterations: total, warmup: warmup, batch: min(100, total)) {
                    guard URL(string: "/v2/search", relativeTo: URL(string: base))?.absoluteURL != nil else {
                        throw BenchmarkError(description: "Foundation could not build the baseline URL")
                    }
                })
        }

        // `async` delivers inline rather than through the callback queue: one thread hop fewer,
        // so less noise around the small difference being looked for.
        for (name, withArguments) in zip(names.suffix(2), [false, true]) where plan.includes(name) {
            progress(name)
            let request = SearchRequest(withArguments: withArguments)
            let (total, warmup) = plan.counts(default: 20_000)
            results.append(
                try await Load.async(name, total: total, warmup: warmup, inFlight: 1) {
                    _ = try await agent.response(request)
                })
        }
        return results
    }
}
