// Measures what Errand costs: its own work per request, URL building and argument encoding,
// real loopback HTTP beside URLSession alone and libcurl alone, HTTP/2 against HTTP/1.1 to a
// local nginx (when one is named; see h2-server.sh), the memory of large transfers, and
// streamed responses' latency, parsing rate and memory. Numbers, not pass/fail; see BENCHMARKS.md.
//
//     swift run -c release ErrandBenchmarks [--only NAME]... [--iterations N] [--list]
//     swift run -c release ErrandBenchmarks --only soak [--minutes 30] [--transport urlsession]

import Foundation

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(status)
}

// The benchmark starts copies of itself: one that serves, one per peak memory measured.
let childArguments = Array(CommandLine.arguments.dropFirst())
if childArguments.first == ServerProcess.serveArgument {
    ServerProcess.serve()
}
if childArguments.count == 2, childArguments[0] == FreshProcess.argument {
    await FreshProcess.measureAndExit(childArguments[1])
}
// The soak runs in a child, and its servers in a grandchild.
if childArguments.first == SoakBenchmark.childArgument {
    await SoakRun.runAndExit(Array(childArguments.dropFirst()))
}
if childArguments.count == 3, childArguments[0] == SoakServer.argument {
    SoakServer.serve(seed: UInt64(childArguments[1]) ?? 1, faults: childArguments[2] == "faults")
}

let plan: Plan
do {
    plan = try Plan(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    fail("\(error.description)\n\n\(Plan.usage)", status: 2)
}
if plan.helpOnly {
    print(Plan.usage)
    exit(0)
}
if plan.listOnly {
    print(Plan.allNames.joined(separator: "\n"))
    exit(0)
}

if plan.countsAllocations {
    guard ProcessAllocations.isAvailable else {
        fail("--allocations: allocations are counted on glibc only", status: 2)
    }
    ProcessAllocations.start()
}

#if DEBUG
    print("warning: a debug build; these numbers say little. Use `swift run -c release ErrandBenchmarks`.\n")
#endif
print(
    "Errand benchmarks: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.operatingSystemVersionString)"
)
if plan.only.allSatisfy({ $0 == SoakBenchmark.name }) && plan.includes(SoakBenchmark.name) {
    exit(SoakBenchmark.supervise(plan.soak))
}

// Progress goes to standard error so that standard output is only the report.
let progress: (String) -> Void = { FileHandle.standardError.write(Data("  running \($0)\n".utf8)) }
var results: [Measurement] = []
var transfers: [FreshProcess.Result] = []
var resumedUploads: [ResumedUploadBenchmark.Row] = []
var streams = StreamBenchmarks.Report()
var connections = ConnectionBenchmarks.Report()
var sockets = WebSocketBenchmarks.Report()
do {
    results += try await OverheadBenchmarks.run(plan, progress: progress)
    results += try await MonitorBenchmarks.run(plan, progress: progress)
    results += try await EncodingBenchmarks.run(plan, progress: progress)
    results += try CookieBenchmarks.run(plan, progress: progress)
    results += try await CacheBenchmarks.run(plan, progress: progress)
    results += try await RevalidationBenchmarks.run(plan, progress: progress)
    results += try await ComposeBenchmarks.run(plan, progress: progress)
    results += try await HandOffBenchmarks.run(plan, progress: progress)
    results += try await LoopbackBenchmarks.run(plan, progress: progress)
    connections = try await ConnectionBenchmarks.run(plan, progress: progress)
    transfers = try await TransferBenchmarks.run(plan, progress: progress)
    resumedUploads = try await ResumedUploadBenchmark.run(plan, progress: progress)
    streams = try await StreamBenchmarks.run(plan, progress: progress)
    sockets = try await WebSocketBenchmarks.run(plan, progress: progress)
    results += sockets.measurements
} catch {
    fail("benchmark failed: \(error)", status: 1)
}

if !results.isEmpty {
    print()
    print(
        Format.table(
            header: ["benchmark", "ops", "median", "p90", "throughput", "cpu/op"]
                + (plan.countsAllocations ? ["allocs/op"] : []),
            rows: results.map {
                [
                    $0.name, Format.count($0.operations), Format.duration(nanoseconds: $0.median),
                    Format.duration(nanoseconds: $0.p90), Format.rate($0.throughput),
                    Format.duration(nanoseconds: $0.cpuPerOperation),
                ]
                    + (plan.countsAllocations
                        ? [$0.allocationsPerOperation.map { String(format: "%.1f", $0) } ?? "—"] : [])
            }))
}

// Differences between rows that are only comparable in pairs.
let byName = Dictionary(results.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
func difference(_ name: String, _ base: String, _ label: String) {
    guard let measured = byName[name], let baseline = byName[base] else { return }
    func signed(_ nanoseconds: Double) -> String {
        (nanoseconds < 0 ? "-" : "+") + Format.duration(nanoseconds: abs(nanoseconds))
    }
    let ratio = baseline.throughput > 0 ? measured.throughput / baseline.throughput : 0
    print(
        "  \(label): \(signed(measured.median - baseline.median)) median latency, "
            + "\(signed(measured.cpuPerOperation - baseline.cpuPerOperation)) CPU per request, "
            + "\(String(format: "%.2f", ratio))× the throughput")
}
print()
difference("encoding.pipeline.10-arguments", "encoding.pipeline.no-arguments", "ten arguments vs none (stub pipeline)")
difference("monitor.empty-monitor", "monitor.none", "one empty event monitor vs none (stub pipeline)")
difference("monitor.har-recorder", "monitor.none", "a HARRecorder vs no monitor (stub pipeline)")
difference("replay.async", "cache.memory-hit.async", "a replayed request vs a memory cache hit")
for inFlight in LoopbackBenchmarks.concurrencies {
    let baseline = LoopbackBenchmarks.name(.urlsession, inFlight: inFlight)
    for client in LoopbackBenchmarks.clients(inFlight: inFlight).dropFirst() where !client.isBareCurl {
        let name = LoopbackBenchmarks.name(client, inFlight: inFlight)
        difference(name, baseline, "\(client.rawValue) vs URLSession alone, \(inFlight) in flight")
    }
}
let bareCurlSummary = LoopbackBenchmarks.bareCurlSummary(byName)
if !bareCurlSummary.isEmpty {
    print("  Errand on libcurl ÷ bare libcurl (same server, same run):")
    bareCurlSummary.forEach { print("    \($0)") }
}
if !connections.rows.isEmpty || connections.skipped != nil {
    print()
    print(ConnectionBenchmarks.table(connections))
}
if !resumedUploads.isEmpty {
    print()
    print(ResumedUploadBenchmark.table(resumedUploads))
}
if !streams.latencies.isEmpty || !streams.rates.isEmpty {
    print()
    print(StreamBenchmarks.tables(streams))
}
if let perSocket = sockets.idleBytesPerSocket {
    print()
    print(
        "  \(WebSocketBenchmarks.idleMemory): \(String(format: "%.1f KiB", perSocket / 1024)) resident per open, "
            + "idle socket (\(WebSocketBenchmarks.socketCount) sockets, compression agreed)")
}
// A slow stream consumer's peak memory is measured as a transfer's is.
transfers += streams.memory
if !transfers.isEmpty {
    print()
    func mebibytes(_ kibibytes: Int?) -> String {
        kibibytes.map { String(format: "%.1f MiB", Double($0) / 1024) } ?? "n/a"
    }
    print(
        Format.table(
            header: ["transfer", "bytes", "time", "rate", "resident before", "peak resident"],
            rows: transfers.map {
                [
                    $0.name, String(format: "%.0f MiB", Double($0.bytes) / 1_048_576),
                    String(format: "%.2f s", $0.seconds),
                    String(format: "%.0f MiB/s", Double($0.bytes) / 1_048_576 / $0.seconds),
                    mebibytes($0.residentBeforeKiB), mebibytes($0.peakResidentKiB),
                ]
            }))
}
if let peak = PeakMemory.residentHighWaterMark() {
    print("  peak resident memory (VmHWM): \(String(format: "%.1f", Double(peak) / 1024)) MiB")
} else {
    print("  peak resident memory: not available here (no /proc/self/status)")
}
if plan.includes(SoakBenchmark.name) {
    print()
    exit(SoakBenchmark.supervise(plan.soak))
}
