// Errand beside other Swift clients, alternating in one run against one server, the order
// flipped every round; each table gives every client's median over the rounds.
//
// - websocket.*: Errand's WebSocket client beside hummingbird's WebSocketClient (swift-websocket,
//   on SwiftNIO), against the root package's test server in a child process.
// - loopback.cN.*: keep-alive HTTP/1.1 `GET /small-json` from the same test server at 1, 16 and 64
//   in flight: Errand (async and closures, on CurlTransport), AsyncHTTPClient (`HTTPClient.shared`,
//   and one event loop with 6 connections), URLSession, and bare libcurl (the root package's
//   `loopback.bare-curl-multi`, run by its ErrandBenchmarks in a process of its own).
// - h2.c16.*: HTTP/2 over TLS at 16 in flight from a local nginx (eval "$(../h2-server.sh start)"
//   first): Errand and AsyncHTTPClient (shared event loops, and one).
// - scale.N.*: N Server-Sent-Events streams, one event a second each, from one asyncio server
//   (sse_server.py): Errand's event streams beside AsyncHTTPClient's, each run in a fresh process.
//
//     swift build -c release --product ErrandBenchmarks       # in the root package: the server
//     cd Benchmarks/Peers && swift build -c release           # 4–5 minutes the first time
//     .build/release/PeerBenchmarks                           # everything, 3 rounds
//     .build/release/PeerBenchmarks --only loopback --rounds 3 --requests 3000
//     .build/release/PeerBenchmarks --only scale.100 --only scale.1000 --seconds 10
//     .build/release/PeerBenchmarks --only websocket
//     .build/release/PeerBenchmarks --list                    # the names --only selects from
//
// CPU is the client process's own (getrusage); every server runs in a child process.

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

// A child measuring one scale run: `--scale-child errand|ahc --url http://… --streams N --seconds S`.
if let client = option(ScaleChild.argument), let url = option("--url"),
    let streams = option("--streams").flatMap({ Int($0) }), let seconds = option("--seconds").flatMap({ Int($0) })
{
    do {
        let result = try await ScaleChild.measure(client: client, base: url, streams: streams, seconds: seconds)
        print(String(decoding: try ScaleSuite.encoder.encode(result), as: UTF8.self))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("scale \(client) \(streams) failed: \(error)\n".utf8))
        exit(1)
    }
}

let plan: Plan
do {
    plan = try Plan(arguments: arguments)
} catch {
    FileHandle.standardError.write(Data("\(error)\n\n\(Plan.usage)\n".utf8))
    exit(2)
}
if plan.helpOnly {
    print(Plan.usage)
    exit(0)
}
if plan.listOnly {
    print(Plan.allNames.joined(separator: "\n"))
    exit(0)
}

do {
    if (Suite.names + LoopbackSuite.names).contains(where: plan.includes) {
        let server = try ServerProcess.testServer(plan.server)
        defer { server.stop() }
        try await Suite.run(plan, server: server)
        try await LoopbackSuite.run(plan, server: server)
    }
    try await LoopbackSuite.runHTTP2(plan)
    try await ScaleSuite.run(plan)
} catch {
    FileHandle.standardError.write(Data("peer benchmarks failed: \(error)\n".utf8))
    exit(1)
}
