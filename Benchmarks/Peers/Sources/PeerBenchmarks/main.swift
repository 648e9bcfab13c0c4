// Errand's WebSocket client beside hummingbird's WebSocketClient (swift-websocket, on SwiftNIO),
// alternating in one run against one server: the embedded test server of the root package, in a
// child process (`ErrandBenchmarks --serve-test-server`), so CPU and memory are the client's.
//
//     swift build -c release --product ErrandBenchmarks                 # in the root package
//     cd Benchmarks/Peers && swift run -c release PeerBenchmarks [--rounds N] [--server PATH]
//
// Each round runs every benchmark once per client, Errand first in odd rounds and second in even
// ones; the table gives each client's median over the rounds.

import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())

func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

// A child measuring one client's idle memory: `--idle errand|nio --url ws://…`.
if let client = option("--idle"), let url = option("--url") {
    do {
        let perSocket = try await IdleMemory.measure(client: client, url: url)
        print(perSocket)
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("idle memory failed: \(error)\n".utf8))
        exit(1)
    }
}

let rounds = option("--rounds").flatMap(Int.init) ?? 3
let serverPath = option("--server") ?? "../../.build/release/ErrandBenchmarks"
do {
    let server = try ServerProcess(executable: serverPath)
    defer { server.stop() }
    let clients: [any SocketClient] = [ErrandClient(), NIOClient()]
    var results: [String: [String: [Double]]] = [:]
    for round in 1...rounds {
        FileHandle.standardError.write(Data("round \(round) of \(rounds)\n".utf8))
        let order = round % 2 == 1 ? clients : clients.reversed()
        for client in order {
            for (name, value) in try await Suite.run(client, base: server.webSocketBase) {
                results[name, default: [:]][client.name, default: []].append(value)
            }
        }
    }
    Suite.report(results, clients: clients.map(\.name), rounds: rounds)
} catch {
    FileHandle.standardError.write(Data("peer benchmarks failed: \(error)\n".utf8))
    exit(1)
}
