import Foundation

/// A server in a child process, so that the CPU and memory measured are the client's: it prints
/// its port as its first line and serves until its standard input closes.
final class ServerProcess {
    let port: Int
    private let process = Process()
    private let input = Pipe()

    /// The root package's test server, `ErrandBenchmarks --serve-test-server`: WebSocket echo and
    /// floods, and `GET /small-json`.
    static func testServer(_ executable: String) throws -> ServerProcess {
        try ServerProcess(
            executable: executable, arguments: ["--serve-test-server"],
            hint: "build it with `swift build -c release --product ErrandBenchmarks` in the root package")
    }

    /// `sse_server.py`, next to this package's `Package.swift`: many event streams in one asyncio loop.
    static func eventServer(python: String) throws -> ServerProcess {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("sse_server.py").path
        return try ServerProcess(
            executable: "/usr/bin/env", arguments: [python, script], hint: "it needs python3 (--python PATH)")
    }

    private init(executable: String, arguments: [String], hint: String) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = line.split(separator: "\n").first.flatMap({ Int($0) }) else {
            process.terminate()
            throw PeerError("\(executable) \(arguments.joined(separator: " ")) did not report its port; \(hint)")
        }
        self.port = port
    }

    /// `ws://127.0.0.1:PORT`.
    var webSocketBase: String { "ws://127.0.0.1:\(port)" }

    /// `http://127.0.0.1:PORT`.
    var httpBase: String { "http://127.0.0.1:\(port)" }

    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

struct PeerError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
