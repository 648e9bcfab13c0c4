// Drives Autobahn|Testsuite's fuzzing server (the WebSocket conformance suite) with Errand's
// WebSocket: for each case it connects, echoes every message until the server closes, and at
// the end asks the server to write its report.
//
//     swift run ErrandAutobahn [--url http://127.0.0.1:9001] [--agent Errand] [--first N] [--last M]
//
// The server's side, and the summary of its report, are in .ci/autobahn.

import Errand
import Foundation

/// One of the fuzzing server's endpoints, such as `/runCase?case=3&agent=Errand`.
struct Endpoint: BaseRequest {
    let url: String
}

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

let config = NetworkConfig()
config.baseUrl = option("--url") ?? "http://127.0.0.1:9001"
let agent = NetworkAgent(config: config, transport: CurlTransport())
let agentName = option("--agent") ?? "Errand"
var options = WebSocketOptions()
// Case 9.x sends messages of 16 MiB; unsolicited pings would show up in the cases' results.
options.maximumMessageSize = 32 << 20
options.pingInterval = nil
options.closeTimeout = 10

do {
    let counter = try await agent.webSocket(Endpoint(url: "/getCaseCount"), options: options)
    var count = 0
    for try await message in counter {
        if case .text(let text) = message { count = Int(text) ?? 0 }
    }
    let first = option("--first").flatMap(Int.init) ?? 1
    let last = min(option("--last").flatMap(Int.init) ?? count, count)
    print("Running cases \(first) to \(last) of \(count) as \(agentName).")
    let started = Date()
    for number in first...max(first, last) where number <= last {
        do {
            let socket = try await agent.webSocket(
                Endpoint(url: "/runCase?case=\(number)&agent=\(agentName)"), options: options)
            for try await message in socket { try await socket.send(message) }
        } catch {
            // The suite breaks the protocol on purpose: failing the connection is the answer it grades.
        }
        if number % 50 == 0 { print("  \(number) cases, \(Int(Date().timeIntervalSince(started))) s") }
    }
    let report = try await agent.webSocket(Endpoint(url: "/updateReports?agent=\(agentName)"), options: options)
    for try await _ in report {}
    print("Done in \(Int(Date().timeIntervalSince(started))) s; the server wrote its report.")
} catch {
    print("ErrandAutobahn failed: \(error)")
    exit(1)
}
