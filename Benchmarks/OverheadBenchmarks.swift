import Errand

/// What Errand adds to every request: URL building, argument encoding, queueing, validation
/// and callback delivery, with a transport that costs nothing.
///
/// It should be small beside the half a millisecond of CPU URLSession spends on a loopback request.
enum OverheadBenchmarks {
    static let names = [
        "overhead.callbacks.sequential", "overhead.callbacks.16-in-flight",
        "overhead.async.sequential", "overhead.async.16-in-flight",
    ]

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Measurement] {
        let agent = makeStubAgent()
        let request = UserInfoRequest()
        var results: [Measurement] = []
        for (name, inFlight) in zip(names.prefix(2), [1, 16]) where plan.includes(name) {
            progress(name)
            let (total, warmup) = plan.counts(default: 20_000)
            results.append(
                try await Load.callbacks(name, total: total, warmup: warmup, inFlight: inFlight) { done in
                    agent.start(request, outcome: done)
                })
        }
        for (name, inFlight) in zip(names.suffix(2), [1, 16]) where plan.includes(name) {
            progress(name)
            let (total, warmup) = plan.counts(default: 20_000)
            results.append(
                try await Load.async(name, total: total, warmup: warmup, inFlight: inFlight) {
                    _ = try await agent.response(request)
                })
        }
        return results
    }
}
