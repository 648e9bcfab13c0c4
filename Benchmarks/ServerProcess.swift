import ErrandTestServer
import Foundation

/// The embedded test server in a child process of this executable, so that a benchmark of the
/// client's memory does not count the server's.
final class ServerProcess: Sendable {
    static let serveArgument = "--serve-test-server"

    let baseURL: String
    private let process: Process
    private let input: Pipe

    /// Starts `ErrandBenchmarks --serve-test-server` and reads the port it listens on.
    init() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [Self.serveArgument]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let line = output.fileHandleForReading.availableData
        guard let port = String(decoding: line, as: UTF8.self).split(separator: "\n").first.flatMap({ Int($0) })
        else {
            process.terminate()
            throw BenchmarkError(description: "the server process did not report its port")
        }
        baseURL = "http://127.0.0.1:\(port)"
    }

    /// Ends the child: it exits when its standard input closes.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    /// The child's side: serve until standard input closes, then exit.
    static func serve() -> Never {
        do {
            let server = try TestServer()
            for (name, resource) in RevalidationBenchmarks.resources { server.setCacheableResource(name, resource) }
            print(server.port)
            fflush(nil)
            _ = FileHandle.standardInput.readDataToEndOfFile()
            server.stop()
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("cannot start the test server: \(error)\n".utf8))
            exit(1)
        }
    }
}
