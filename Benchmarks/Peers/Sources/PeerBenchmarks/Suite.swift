import Foundation

/// The WebSocket workloads, each measured the same way for every client, and the report.
enum Suite {
    static let roundTrip = "websocket.round-trip"
    static let receivePlain = "websocket.receive.plain"
    static let receiveDeflate = "websocket.receive.deflate"
    static let fanIn = "websocket.fan-in"
    static let idleMemory = "websocket.idle-memory"
    static let names = [roundTrip, receivePlain, receiveDeflate, fanIn, idleMemory]

    static let roundTripCount = 10_000
    static let receiveCount = 200_000
    static let fanInSockets = 1_000
    static let fanInMessages = 50

    /// Every round of the WebSocket benchmarks `plan` selects, Errand first in odd rounds and
    /// second in even ones, then the table; nothing when it selects none.
    static func run(_ plan: Plan, server: ServerProcess) async throws {
        guard names.contains(where: plan.includes) else { return }
        let clients: [any SocketClient] = [ErrandClient(), NIOClient()]
        var results: [String: [String: [Double]]] = [:]
        for round in 1...plan.rounds {
            progress("websocket: round \(round) of \(plan.rounds)")
            let order = round % 2 == 1 ? clients : clients.reversed()
            for client in order {
                for (name, value) in try await run(client, base: server.webSocketBase, plan: plan) {
                    results[name, default: [:]][client.name, default: []].append(value)
                }
            }
        }
        report(results, clients: clients.map(\.name), rounds: plan.rounds)
    }

    /// Every number for `client` that `plan` asks for, by row.
    private static func run(_ client: any SocketClient, base: String, plan: Plan) async throws -> [(String, Double)] {
        var results: [(String, Double)] = []
        let clock = ContinuousClock()

        if plan.includes(roundTrip) {
            let cpu = ProcessCPU.now()
            let latencies = try await client.roundTrips(url: base + "/ws/echo", count: roundTripCount).sorted()
            results.append(("round trip, median µs", latencies[latencies.count / 2].microseconds))
            results.append(("round trip, CPU µs each", (ProcessCPU.now() - cpu).microseconds / Double(roundTripCount)))
        }

        for compressed in [false, true] where plan.includes(compressed ? receiveDeflate : receivePlain) {
            let label = compressed ? "deflate" : "plain"
            let began = clock.now
            let cpu = ProcessCPU.now()
            try await client.receive(
                url: base + "/ws/echo?flood=\(receiveCount)&size=1024", count: receiveCount, compressed: compressed)
            let seconds = (clock.now - began).microseconds / 1e6
            results.append(("receive 1 KiB \(label), k messages/s", Double(receiveCount) / seconds / 1000))
            results.append(
                ("receive 1 KiB \(label), CPU µs each", (ProcessCPU.now() - cpu).microseconds / Double(receiveCount)))
        }

        if plan.includes(fanIn) {
            let start = Locked()
            try await client.fanIn(
                url: base + "/ws/echo?ticks=\(fanInMessages)&tick_ms=100", sockets: fanInSockets,
                messages: fanInMessages
            ) {
                start.set(ProcessCPU.now())
            }
            let fanInCPU = ProcessCPU.now() - (start.value ?? ProcessCPU.now())
            results.append(
                (
                    "fan-in 1,000 sockets × 10/s, CPU µs per message",
                    fanInCPU.microseconds / Double(fanInSockets * fanInMessages)
                ))
        }

        if plan.includes(idleMemory) {
            results.append(("idle socket, KiB resident", try idleKiB(client, base: base)))
        }
        return results
    }

    /// Runs this executable again to measure `client`'s idle memory in a fresh process.
    private static func idleKiB(_ client: any SocketClient, base: String) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--idle", client is ErrandClient ? "errand" : "nio", "--url", base + "/ws/echo"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard let bytes = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw PeerError("the idle-memory child said \(text)")
        }
        return bytes / 1024
    }

    private static func report(_ results: [String: [String: [Double]]], clients: [String], rounds: Int) {
        let order = [
            "round trip, median µs", "round trip, CPU µs each", "receive 1 KiB plain, k messages/s",
            "receive 1 KiB plain, CPU µs each", "receive 1 KiB deflate, k messages/s",
            "receive 1 KiB deflate, CPU µs each", "fan-in 1,000 sockets × 10/s, CPU µs per message",
            "idle socket, KiB resident",
        ]
        print("WebSocket peers, medians of \(rounds) alternating rounds (each cell: median [all rounds])")
        print("| | " + clients.joined(separator: " | ") + " | Errand ÷ peer |")
        print("| --- |" + String(repeating: " ---: |", count: clients.count + 1))
        for name in order where results[name] != nil {
            let medians = clients.map { client -> Double in
                let values = (results[name]?[client] ?? []).sorted()
                return values.isEmpty ? .nan : values[values.count / 2]
            }
            let cells = clients.enumerated().map { index, client in
                let all = (results[name]?[client] ?? []).map { String(format: "%.1f", $0) }.joined(separator: ", ")
                return String(format: "%.1f", medians[index]) + " [\(all)]"
            }
            let ratio = medians.count == 2 && medians[1] > 0 ? String(format: "%.2f", medians[0] / medians[1]) : "n/a"
            print("| \(name) | " + cells.joined(separator: " | ") + " | \(ratio) |")
        }
    }
}

/// A value set from one task and read by another.
final class Locked: @unchecked Sendable {  // Sendable: every access holds `lock`.
    private let lock = NSLock()
    private var stored: Duration?

    func set(_ value: Duration) { lock.withLock { stored = value } }
    var value: Duration? { lock.withLock { stored } }
}
