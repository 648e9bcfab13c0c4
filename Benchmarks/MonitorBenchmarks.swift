import Errand

/// What event monitors add to a request: the stub pipeline's `async` round trip with no monitor,
/// and with one whose methods are all the empty defaults, so the difference is Errand's own cost
/// of reporting six events per request to a monitor's queue.
enum MonitorBenchmarks {
    static let names = ["monitor.none", "monitor.empty-monitor"]

    /// A monitor that implements nothing: every event is the protocol's empty default.
    private struct EmptyMonitor: EventMonitor {}

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Measurement] {
        var results: [Measurement] = []
        for name in names where plan.includes(name) {
            progress(name)
            let agent = makeStubAgent()
            if name == "monitor.empty-monitor" { agent.config.addEventMonitor(EmptyMonitor()) }
            let request = UserInfoRequest()
            let (total, warmup) = plan.counts(default: 20_000)
            results.append(
                try await Load.async(name, total: total, warmup: warmup, inFlight: 1) {
                    _ = try await agent.response(request)
                })
        }
        return results
    }
}
