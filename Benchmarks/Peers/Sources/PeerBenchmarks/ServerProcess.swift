import Foundation

/// The root package's test server in a child process: `ErrandBenchmarks --serve-test-server`
/// prints its port and serves until its standard input closes.
final class ServerProcess {
    let port: Int
    private let process = Process()
    private let input = Pipe()

    init(executable: String) throws {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--serve-test-server"]
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard let port = line.split(separator: "\n").first.flatMap({ Int($0) }) else {
            process.terminate()
            throw PeerError(
                "the server at \(executable) did not report its port; build it with "
                    + "`swift build -c release --product ErrandBenchmarks` in the root package")
        }
        self.port = port
    }

    /// `ws://127.0.0.1:PORT`.
    var webSocketBase: String { "ws://127.0.0.1:\(port)" }

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
