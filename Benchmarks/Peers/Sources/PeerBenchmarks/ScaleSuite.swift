import Foundation

/// N Server-Sent-Events streams open at once (`scale.100`, `scale.1000`, `scale.10000`), each
/// receiving one event a second, from one local asyncio server (`sse_server.py`): Errand's event
/// streams beside AsyncHTTPClient's streamed bodies. Each client's run is a fresh process
/// (``ScaleChild``), alternating, the order flipped every round; the table gives each one's
/// median. Measured: time to open all N, resident memory per open stream, client CPU per event,
/// latency from the server's send to the consumer (p50, p99), and events received of expected.
enum ScaleSuite {
    static let streamCounts = [100, 1_000, 10_000]
    /// The clients' keys and labels, in the order odd rounds run them.
    static let clients = [("errand", "Errand"), ("ahc", "AsyncHTTPClient")]

    static func name(streams: Int, key: String) -> String { "scale.\(streams).\(key)" }

    static let names = streamCounts.flatMap { streams in clients.map { name(streams: streams, key: $0.0) } }

    static func run(_ plan: Plan) async throws {
        guard names.contains(where: plan.includes) else { return }
        let (soft, hard) = FileLimit.raise()
        let server = try ServerProcess.eventServer(python: plan.python)
        defer { server.stop() }

        var results: [Int: [String: [ScaleResult]]] = [:]
        var notes: [String] = []
        for streams in streamCounts where clients.contains(where: { plan.includes(name(streams: streams, key: $0.0)) })
        {
            guard soft >= streams + FileLimit.slack else {
                notes.append(
                    "scale.\(streams) skipped: each process needs \(streams + FileLimit.slack) descriptors "
                        + "(\(streams) streams + \(FileLimit.slack)); the limit is \(soft) (hard \(hard)). Raise `ulimit -Hn`."
                )
                progress(notes.last ?? "")
                continue
            }
            for round in 1...plan.rounds {
                for (key, _) in round % 2 == 1 ? clients : clients.reversed()
                where plan.includes(name(streams: streams, key: key)) {
                    progress("\(name(streams: streams, key: key)): round \(round) of \(plan.rounds)")
                    let output = try await ChildProcess.output(
                        CommandLine.arguments[0],
                        [
                            ScaleChild.argument, key, "--url", server.httpBase, "--streams", "\(streams)",
                            "--seconds", "\(plan.seconds)",
                        ])
                    guard let line = output.split(separator: "\n").last,
                        let result = try? decoder.decode(ScaleResult.self, from: Data(line.utf8))
                    else {
                        throw PeerError("the scale child for \(name(streams: streams, key: key)) printed \(output)")
                    }
                    for failure in result.failures { progress("  \(key): \(failure)") }
                    results[streams, default: [:]][key, default: []].append(result)
                }
            }
        }
        report(results, plan: plan, limit: soft, notes: notes)
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        return decoder
    }()

    private static func report(_ results: [Int: [String: [ScaleResult]]], plan: Plan, limit: Int, notes: [String]) {
        print(
            "Scale peers: N Server-Sent-Events streams, 1 event/s each for \(plan.seconds) s, one asyncio server; "
                + "each client's run a fresh process; median of \(plan.rounds) alternating rounds [each round]; "
                + "descriptor limit \(limit)")
        // Label, format, value, and whether Errand ÷ AHC means something for it.
        let rows: [(String, String, (ScaleResult) -> Double, Bool)] = [
            ("time to open all N, ms", "%.0f", { $0.openMilliseconds }, true),
            ("resident KiB per open stream", "%.1f", { $0.residentKiBPerStream }, true),
            ("client CPU µs per event", "%.1f", { $0.cpuMicrosecondsPerEvent }, true),
            ("latency p50, µs (send → consumer)", "%.0f", { $0.latencyP50Microseconds }, true),
            ("latency p99, µs", "%.0f", { $0.latencyP99Microseconds }, true),
            ("events received", "%.0f", { Double($0.received) }, false),
            ("streams that failed", "%.0f", { Double($0.failureCount) }, false),
            ("descriptors open, all streams open", "%.0f", { Double($0.descriptors) }, false),
        ]
        for streams in streamCounts {
            guard let byClient = results[streams] else { continue }
            let present = clients.filter { byClient[$0.0] != nil }
            let compared = present.count == 2
            let expected = byClient.values.first?.first?.expected ?? 0
            print()
            print(
                "| scale.\(streams): \(streams) streams, \(expected) events expected | "
                    + present.map(\.1).joined(separator: " | ") + (compared ? " | Errand ÷ AHC |" : " |"))
            print("| --- |" + String(repeating: " ---: |", count: present.count + (compared ? 1 : 0)))
            for (label, format, value, hasRatio) in rows {
                let values = present.map { byClient[$0.0, default: []].map(value) }
                var line = "| \(label) | " + values.map { cell($0, format) }.joined(separator: " | ")
                if compared {
                    line += " | " + (hasRatio ? String(format: "%.2f", median(values[0]) / median(values[1])) : "–")
                }
                print(line + " |")
            }
        }
        for note in notes { print(note) }
        print()
    }
}
