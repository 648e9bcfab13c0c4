import Errand
import ErrandTestServer
import Foundation

/// Streamed responses (`NetworkAgent.stream(_:)`) over loopback, through the public API only, on
/// each transport; the server runs in a child process, so CPU and memory are the client's alone.
///
/// - `stream.latency.*`: how long an event takes from the server's send to the consumer of
///   `stream.events`. The server writes `CLOCK_MONOTONIC` into each event just before sending it
///   (`/sse/events?timestamp=1`), and the consumer reads the same system-wide clock as the event
///   arrives. Events are 3 ms apart, so each is measured alone rather than behind the one before.
/// - `stream.events-per-second.*`: a 256 MiB Server-Sent Events body of small events
///   (`/sse/endless`, as fast as the client reads) through `stream.events`, and the same bytes as
///   raw chunks in the same run: the difference is the cost of the event parser.
/// - `stream.slow-consumer-rss.*`: peak resident memory while a consumer slower than the network
///   reads 1 GiB of raw chunks (`/download`), each in a fresh process: flow control should keep
///   it flat.
enum StreamBenchmarks {
    /// The transport under the agent: `curl` is ``CurlTransport``, `urlsession` ``URLSessionTransport``.
    enum TransportKind: String, CaseIterable, Sendable {
        case curl
        case urlsession
    }

    static let latencyNames = TransportKind.allCases.map { "stream.latency.\($0.rawValue)" }
    static let rateNames = TransportKind.allCases.map { "stream.events-per-second.\($0.rawValue)" }
    static let memoryNames = TransportKind.allCases.map { "stream.slow-consumer-rss.\($0.rawValue)" }
    static let names = latencyNames + rateNames + memoryNames

    /// Milliseconds between the events whose latency is measured: long beside the latency, so an
    /// event never waits behind the one before it.
    static let latencyInterval = 3
    /// The body read for events per second: about 12.5 million events of 20–22 bytes.
    static let rateBytes = 256 << 20
    /// The stream the slow consumer reads.
    static let slowConsumerBytes = 1 << 30
    /// The slow consumer sleeps `slowConsumerPause` after each `slowConsumerStride` bytes: at most
    /// 80 MiB/s, below what either transport delivers over loopback, so without flow control the
    /// difference would pile up in memory.
    static let slowConsumerStride = 4 << 20
    static let slowConsumerPause = Duration.milliseconds(50)

    /// The same bytes read twice: as raw chunks, and parsed into events.
    struct Rate: Sendable {
        let name: String
        let events: Int
        let bytes: Int
        let raw: Run
        let parsed: Run

        /// One reading of the body: wall and CPU time from asking for the stream to its end.
        struct Run: Sendable {
            let seconds: Double
            let cpuSeconds: Double
        }
    }

    /// Everything the group measured; memory rows join the transfers' table.
    struct Report: Sendable {
        var latencies: [Measurement] = []
        var rates: [Rate] = []
        var memory: [FreshProcess.Result] = []
    }

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> Report {
        var report = Report()
        if names.contains(where: { plan.includes($0) && !memoryNames.contains($0) }) {
            let server = try ServerProcess()
            defer { server.stop() }
            for (name, kind) in zip(latencyNames, TransportKind.allCases) where plan.includes(name) {
                progress(name)
                let (events, warmup) = plan.counts(default: 1_000)
                report.latencies.append(
                    try await latency(name, agent: makeAgent(server.baseURL, kind), events: events, warmup: warmup))
            }
            for (name, kind) in zip(rateNames, TransportKind.allCases) where plan.includes(name) {
                progress(name)
                report.rates.append(try await rate(name, agent: makeAgent(server.baseURL, kind)))
            }
        }
        for name in memoryNames where plan.includes(name) {
            progress(name)
            report.memory.append(try FreshProcess.measure(name))
        }
        return report
    }

    /// The child process's side of `stream.slow-consumer-rss.*`.
    static func measureInThisProcess(_ name: String) async throws -> FreshProcess.Result {
        guard let kind = zip(memoryNames, TransportKind.allCases).first(where: { $0.0 == name })?.1 else {
            throw BenchmarkError(description: "\(name) is not measured in a process of its own")
        }
        let server = try ServerProcess()
        defer { server.stop() }
        let agent = makeAgent(server.baseURL, kind)
        let size = slowConsumerBytes
        return try await FreshProcess.measurePeak(name, bytes: size) {
            let stream = try await agent.stream(StreamGet(url: "/download/\(size)"))
            var received = 0
            var sincePause = 0
            for try await chunk in stream {
                received += chunk.count
                sincePause += chunk.count
                if sincePause >= slowConsumerStride {
                    sincePause = 0
                    try await Task.sleep(for: slowConsumerPause)
                }
            }
            guard received == size else {
                throw BenchmarkError(description: "\(name) read \(received) bytes of \(size)")
            }
        }
    }

    private static func makeAgent(_ baseURL: String, _ kind: TransportKind) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = baseURL
        config.callbackQueue = DispatchQueue(label: "ErrandBenchmarks.stream.callbacks")
        let transport: any Transport =
            switch kind {
            case .curl: CurlTransport()
            case .urlsession: URLSessionTransport(configuration: config.sessionConfiguration)
            }
        return NetworkAgent(config: config, transport: transport)
    }

    // MARK: Latency

    /// One stream of `warmup + events` timestamped events; the first `warmup` are not counted.
    private static func latency(_ name: String, agent: NetworkAgent, events: Int, warmup: Int) async throws
        -> Measurement
    {
        let total = warmup + events
        let stream = try await agent.stream(
            StreamGet(url: "/sse/events?count=\(total)&interval=\(latencyInterval)&timestamp=1"))
        var samples: [Duration] = []
        samples.reserveCapacity(events)
        var seen = 0
        let clock = ContinuousClock()
        var began = clock.now
        var cpuStart = ProcessCPU.now()
        for try await event in stream.events {
            // Read first: what follows is the consumer's own work, not the delivery.
            let arrived = TestServer.monotonicNanoseconds()
            guard let sent = sendingTime(event.data) else {
                throw BenchmarkError(description: "\(name): an event without a timestamp: \(event.data)")
            }
            seen += 1
            if seen == warmup {
                began = clock.now
                cpuStart = ProcessCPU.now()
            } else if seen > warmup {
                samples.append(.nanoseconds(Int64(arrived) - Int64(sent)))
            }
        }
        guard seen == total else {
            throw BenchmarkError(description: "\(name): \(seen) events of \(total) arrived")
        }
        return Measurement(
            name: name, operations: events, samples: samples, wall: clock.now - began,
            cpu: ProcessCPU.now() - cpuStart)
    }

    /// `NS` from `{"n":K,"t":NS}`, as `/sse/events?timestamp=1` sends it.
    private static func sendingTime(_ data: String) -> UInt64? {
        guard let field = data.range(of: #""t":"#), data.hasSuffix("}") else { return nil }
        return UInt64(data[field.upperBound...].dropLast())
    }

    // MARK: Events per second

    private static func rate(_ name: String, agent: NetworkAgent) async throws -> Rate {
        let expected = endlessEvents(in: rateBytes)
        // Unmeasured: connections, threads and the transport's buffers warmed up first.
        _ = try await readChunks(agent, bytes: 8 << 20)
        let raw = try await timed {
            let received = try await readChunks(agent, bytes: rateBytes)
            guard received == rateBytes else {
                throw BenchmarkError(description: "\(name): \(received) bytes of \(rateBytes) as chunks")
            }
        }
        let parsed = try await timed {
            let events = try await readEvents(agent, bytes: rateBytes)
            guard events == expected else {
                throw BenchmarkError(description: "\(name): \(events) events of \(expected)")
            }
        }
        return Rate(name: name, events: expected, bytes: rateBytes, raw: raw, parsed: parsed)
    }

    private static func readChunks(_ agent: NetworkAgent, bytes: Int) async throws -> Int {
        let stream = try await agent.stream(StreamGet(url: "/sse/endless?size=\(bytes)"))
        var received = 0
        for try await chunk in stream {
            received += chunk.count
        }
        return received
    }

    /// The events of `bytes` of `/sse/endless`, the last checked: `{"n":K}` counts them from 1.
    private static func readEvents(_ agent: NetworkAgent, bytes: Int) async throws -> Int {
        let stream = try await agent.stream(StreamGet(url: "/sse/endless?size=\(bytes)"))
        var count = 0
        var last: ServerSentEvent?
        for try await event in stream.events {
            count += 1
            last = event
        }
        guard count == 0 || last?.data == #"{"n":\#(count)}"# else {
            throw BenchmarkError(description: "event \(count) was \(last?.data ?? "")")
        }
        return count
    }

    private static func timed(_ work: () async throws -> Void) async throws -> Rate.Run {
        let clock = ContinuousClock()
        let start = clock.now
        let cpuStart = ProcessCPU.now()
        try await work()
        return Rate.Run(
            seconds: (clock.now - start).nanoseconds / 1e9, cpuSeconds: (ProcessCPU.now() - cpuStart).nanoseconds / 1e9)
    }

    /// How many whole events the first `size` bytes of `/sse/endless` hold: `data: {"n":K}\n\n`
    /// is 14 bytes plus K's digits.
    static func endlessEvents(in size: Int) -> Int {
        var events = 0
        var remaining = size
        var digits = 1
        var withDigits = 9
        while remaining > 0 {
            let fitting = min(withDigits, remaining / (14 + digits))
            events += fitting
            guard fitting == withDigits else { break }
            remaining -= withDigits * (14 + digits)
            digits += 1
            withDigits *= 10
        }
        return events
    }

    // MARK: Report

    /// The latency and events-per-second tables, with the parser's cost drawn from each pair.
    static func tables(_ report: Report) -> String {
        var sections: [String] = []
        if !report.latencies.isEmpty {
            sections.append(
                Format.table(
                    header: ["stream latency", "events", "median", "p90", "p99", "max"],
                    rows: report.latencies.map {
                        [
                            $0.name, Format.count($0.operations), Format.duration(nanoseconds: $0.median),
                            Format.duration(nanoseconds: $0.p90), Format.duration(nanoseconds: $0.percentile(99)),
                            Format.duration(nanoseconds: $0.percentile(100)),
                        ]
                    }))
        }
        if !report.rates.isEmpty {
            func row(_ rate: Rate, _ label: String, _ run: Rate.Run) -> [String] {
                let events = Double(rate.events)
                return [
                    rate.name, label, String(format: "%.2f s", run.seconds), Format.rate(events / run.seconds),
                    String(format: "%.0f MiB/s", Double(rate.bytes) / 1_048_576 / run.seconds),
                    Format.duration(nanoseconds: run.cpuSeconds * 1e9 / events),
                ]
            }
            let rows = report.rates.flatMap { [row($0, "raw chunks", $0.raw), row($0, "events", $0.parsed)] }
            var section = Format.table(
                header: ["stream throughput", "read as", "time", "events/s", "bytes/s", "cpu/event"], rows: rows)
            for rate in report.rates {
                func perEvent(_ seconds: Double) -> String {
                    let nanoseconds = seconds * 1e9 / Double(rate.events)
                    return (nanoseconds < 0 ? "-" : "+") + Format.duration(nanoseconds: abs(nanoseconds))
                }
                section +=
                    "\n  \(rate.name): \(Format.count(rate.events)) events in \(rate.bytes >> 20) MiB; the parser "
                    + "\(perEvent(rate.parsed.seconds - rate.raw.seconds)) wall and "
                    + "\(perEvent(rate.parsed.cpuSeconds - rate.raw.cpuSeconds)) CPU per event"
            }
            sections.append(section)
        }
        return sections.joined(separator: "\n\n")
    }
}

/// A GET whose body is read as a stream.
private struct StreamGet: BaseRequest {
    let url: String
    // A stalled stream fails the benchmark in half a minute instead of the default minute.
    var timeoutInterval: TimeInterval { 30 }
}
