import Foundation

/// One scale benchmark — one client, N streams — measured in a fresh copy of this executable, so
/// that its memory is counted from a clean process and no descriptor, thread or pool of an
/// earlier run is still around: `PeerBenchmarks --scale-child errand|ahc --url URL --streams N
/// --seconds S` prints a ``ScaleResult`` as one line of JSON.
///
/// In order: one stream of two quick events, read to its end, so that the client's threads,
/// event loops and pools exist before anything is counted; resident memory; then N streams
/// opened at once. The server keeps them silent until all N are open, so the time to open them
/// and the memory they hold are measured before any event. From then on, CPU time until the
/// last stream ended, divided by the events that arrived, and each event's latency.
enum ScaleChild {
    static let argument = "--scale-child"
    /// How long past the last expected event a run may go before its streams are cancelled and
    /// the events that arrived are counted as they are.
    static let grace = Duration.seconds(30)

    static func measure(client key: String, base: String, streams: Int, seconds: Int) async throws -> ScaleResult {
        let (soft, _) = FileLimit.raise()
        guard soft >= streams + FileLimit.slack else {
            throw PeerError("\(streams) streams need \(streams + FileLimit.slack) descriptors; the limit is \(soft)")
        }
        let client: any ScaleClient =
            switch key {
            case "errand": ErrandScaleClient(streams: streams)
            case "ahc": AHCScaleClient(streams: streams)
            default: throw PeerError("no scale client called \(key)")
            }
        let group = "\(key)-\(getpid())"

        let warm = ScaleRecorder(streams: 1)
        await client.run(
            url: "\(base)/events?streams=1&count=2&interval_ms=10&group=\(group)-warm", streams: 1, recorder: warm)
        guard warm.allLatencies.count == 2 else {
            throw PeerError("\(key): the warm-up stream failed: \(warm.allFailures.joined(separator: "; "))")
        }

        let before = IdleMemory.residentKiB()
        let recorder = ScaleRecorder(streams: streams)
        let clock = ContinuousClock()
        let began = clock.now
        let url = "\(base)/events?streams=\(streams)&count=\(seconds)&group=\(group)"
        let run = Task { await client.run(url: url, streams: streams, recorder: recorder) }
        await recorder.waitUntilSettled()
        let opened = clock.now
        let after = IdleMemory.residentKiB()
        let descriptors = FileLimit.openDescriptors()
        let cpu = ProcessCPU.now()
        // The server starts only once all are open: with one missing, the rest would wait forever.
        let watchdog = Task {
            if recorder.openCount < streams { run.cancel() }
            try await Task.sleep(for: .seconds(seconds) + grace)
            run.cancel()
        }
        await run.value
        watchdog.cancel()
        let steady = clock.now - opened
        let used = ProcessCPU.now() - cpu
        try await client.shutdown()

        let latencies = recorder.allLatencies.sorted()
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return .nan }
            let rank = Int((p / 100 * Double(latencies.count)).rounded(.up))
            return Double(latencies[min(max(rank, 1), latencies.count) - 1]) / 1e3
        }
        return ScaleResult(
            openMilliseconds: (opened - began).microseconds / 1e3,
            residentKiBPerStream: Double(after - before) / Double(streams),
            cpuMicrosecondsPerEvent: latencies.isEmpty ? .nan : used.microseconds / Double(latencies.count),
            latencyP50Microseconds: percentile(50),
            latencyP99Microseconds: percentile(99),
            received: latencies.count,
            expected: streams * seconds,
            opened: recorder.openCount,
            steadySeconds: steady.microseconds / 1e6,
            descriptors: descriptors,
            failures: Array(recorder.allFailures.prefix(5)),
            failureCount: recorder.allFailures.count)
    }
}

/// One scale run's numbers, as the child prints them.
struct ScaleResult: Codable, Sendable {
    /// From asking for the first stream to the last one's head.
    let openMilliseconds: Double
    /// Resident memory gained while the streams opened, per stream.
    let residentKiBPerStream: Double
    /// The whole process's CPU time from all open to all ended, per event received.
    let cpuMicrosecondsPerEvent: Double
    let latencyP50Microseconds: Double
    let latencyP99Microseconds: Double
    let received: Int
    let expected: Int
    let opened: Int
    /// From all open to all ended: the seconds of events, plus the server's 0.2 s start.
    let steadySeconds: Double
    /// Open in the client with every stream open.
    let descriptors: Int
    /// The first few streams' errors, and how many there were.
    let failures: [String]
    let failureCount: Int
}
