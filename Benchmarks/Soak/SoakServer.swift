import ErrandTestServer
import Foundation

/// The soak's servers, in a child process so that the client's descriptors, threads and memory
/// are counted alone: the embedded test server, and the ``FaultProxy`` in front of it with three
/// ports — plain requests, event streams and WebSockets — each a host of its own to the client.
///
/// The child prints `ready HTTP SSE WS` with the ports, answers each `stats` line on its
/// standard input with one line of JSON (the listeners' ``ListenerReport``s), and exits when
/// its standard input closes, as ``ServerProcess``'s does.
final class SoakServer: Sendable {
    static let argument = "--soak-server"

    let httpPort: UInt16
    let ssePort: UInt16
    let webSocketPort: UInt16
    private let process: Process
    private let input: Pipe
    private let output: LineReader
    private let queue = DispatchQueue(label: "ErrandBenchmarks.soak.server")

    /// Starts the child with faults drawn from `seed`, or none when `faults` is off.
    init(seed: UInt64, faults: Bool) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = [Self.argument, String(seed), faults ? "faults" : "no-faults"]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        self.output = LineReader(output.fileHandleForReading)
        let fields = (self.output.readLine() ?? "").split(separator: " ")
        guard fields.count == 4, fields[0] == "ready", let http = UInt16(fields[1]), let sse = UInt16(fields[2]),
            let webSocket = UInt16(fields[3])
        else {
            process.terminate()
            throw BenchmarkError(description: "the soak's server process did not report its ports")
        }
        (httpPort, ssePort, webSocketPort) = (http, sse, webSocket)
    }

    /// What each of the proxy's listeners has seen so far: `http`, `sse`, `ws`.
    func reports() async throws -> [ListenerReport] {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { [self] in
                do {
                    try input.fileHandleForWriting.write(contentsOf: Data("stats\n".utf8))
                    guard let line = output.readLine() else {
                        throw BenchmarkError(description: "the soak's server process ended")
                    }
                    continuation.resume(
                        returning: try JSONDecoder().decode([ListenerReport].self, from: Data(line.utf8)))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Ends the child: it exits when its standard input closes.
    func stop() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    // MARK: The child's side

    /// Serves until standard input closes, then exits.
    static func serve(seed: UInt64, faults: Bool) -> Never {
        do {
            let server = try TestServer()
            for (name, resource) in SoakResource.all { server.setCacheableResource(name, resource) }
            let proxy = try FaultProxy(
                serverPort: server.port, listeners: listeners(faults: faults), seed: seed)
            print("ready \(proxy.ports.map(String.init).joined(separator: " "))")
            fflush(nil)
            let commands = LineReader(FileHandle.standardInput)
            while let command = commands.readLine() {
                guard command == "stats" else { continue }
                let report = (try? JSONEncoder().encode(proxy.stats.snapshot)) ?? Data("[]".utf8)
                print(String(decoding: report, as: UTF8.self))
                fflush(nil)
            }
            proxy.stop()
            server.stop()
            exit(0)
        } catch {
            FileHandle.standardError.write(Data("cannot start the soak's servers: \(error)\n".utf8))
            exit(1)
        }
    }

    /// Plain requests and event streams get random faults and a keep-alive limit of 4 s, as
    /// Node's servers have by default; WebSockets get the faults their handshake names.
    private static func listeners(faults: Bool) -> [FaultProxy.Listener] {
        guard faults else {
            return ["http", "sse", "ws"].map { FaultProxy.Listener(name: $0) }
        }
        return [
            .init(name: "http", mix: FaultMix(bytes: (64 << 10)...(8 << 20), stall: 1...8), idleLimit: 4),
            .init(name: "sse", mix: FaultMix(bytes: 256...(16 << 10), stall: 5...45), idleLimit: 4),
            .init(name: "ws", mix: nil, idleLimit: 4, readsDirectives: true),
        ]
    }
}

/// Lines from a file handle, read as they come. Not shared between threads.
final class LineReader: @unchecked Sendable {  // `pending` is read and written only while holding `lock`
    private let handle: FileHandle
    private let lock = NSLock()
    private var pending = Data()

    init(_ handle: FileHandle) {
        self.handle = handle
    }

    /// The next line without its newline; `nil` once the other end closed.
    func readLine() -> String? {
        lock.withLock {
            while true {
                if let newline = pending.firstIndex(of: 10) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending = Data(pending[(newline + 1)...])
                    return line
                }
                let more = handle.availableData
                guard !more.isEmpty else { return nil }
                pending.append(more)
            }
        }
    }
}
