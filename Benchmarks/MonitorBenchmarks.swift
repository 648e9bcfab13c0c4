import Errand
import Foundation

/// What observing and replaying add to a request, on the stub pipeline's `async` round trip: no
/// monitor; one whose methods are all the empty defaults (Errand's own cost of reporting six
/// events per request to a monitor's queue); a ``HARRecorder`` (building and keeping an entry,
/// the 54-byte body copied); and the same request answered by a ``ReplayTransport`` instead of
/// the stub, to set beside a memory cache hit.
enum MonitorBenchmarks {
    static let names = ["monitor.none", "monitor.empty-monitor", "monitor.har-recorder", "replay.async"]

    /// A monitor that implements nothing: every event is the protocol's empty default.
    private struct EmptyMonitor: EventMonitor {}

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Measurement] {
        var results: [Measurement] = []
        for name in names where plan.includes(name) {
            progress(name)
            let agent = try await makeAgent(for: name)
            let request = UserInfoRequest()
            let (total, warmup) = plan.counts(default: 20_000)
            results.append(
                try await Load.async(name, total: total, warmup: warmup, inFlight: 1) {
                    _ = try await agent.response(request)
                })
        }
        return results
    }

    private static func makeAgent(for name: String) async throws -> NetworkAgent {
        let agent = makeStubAgent()
        switch name {
        case "monitor.empty-monitor":
            agent.config.addEventMonitor(EmptyMonitor())
        case "monitor.har-recorder":
            agent.config.addEventMonitor(HARRecorder())
        case "replay.async":
            return try await makeReplayAgent(recordingFrom: agent)
        default:
            break
        }
        return agent
    }

    /// An agent answering from a HAR file in which `live` recorded the benchmark's request.
    private static func makeReplayAgent(recordingFrom live: NetworkAgent) async throws -> NetworkAgent {
        let recorder = HARRecorder()
        live.config.addEventMonitor(recorder)
        _ = try await live.response(UserInfoRequest())
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("errand-benchmark-\(UUID()).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try recorder.write(to: file)
        let config = NetworkConfig()
        config.baseUrl = live.config.baseUrl
        let agent = NetworkAgent(config: config, transport: try ReplayTransport(har: file))
        agent.maxConcurrentRequests = live.maxConcurrentRequests
        return agent
    }
}
