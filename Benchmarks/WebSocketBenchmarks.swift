import Errand
import Foundation

/// WebSockets over loopback under ``CurlTransport``, through the public API, against the test
/// server's `/ws/echo` in a child process, so CPU and memory are the client's alone.
///
/// - `websocket.round-trip`: a 64-byte text message sent and its echo received, one in flight.
/// - `websocket.receive-rate.plain` / `.deflate`: 1 KiB binary messages the server sends as fast
///   as the client reads them, uncompressed, and compressed with permessage-deflate (the server
///   sends the same compressed frame each time, taking no context over).
/// - `websocket.fan-in-cpu`: 1,000 open sockets each receiving a 64-byte message every 100 ms
///   for 10 s; the client's CPU per message received.
/// - `websocket.idle-memory`: resident memory per open, idle socket, 1,000 of them (compression
///   agreed), beyond what the process held before they opened.
enum WebSocketBenchmarks {
    static let roundTrip = "websocket.round-trip"
    static let ratePlain = "websocket.receive-rate.plain"
    static let rateDeflate = "websocket.receive-rate.deflate"
    static let fanIn = "websocket.fan-in-cpu"
    static let idleMemory = "websocket.idle-memory"
    static let names = [roundTrip, ratePlain, rateDeflate, fanIn, idleMemory]

    /// Sockets held open for the fan-in and the idle memory.
    static let socketCount = 1_000

    /// What the group measured.
    struct Report: Sendable {
        var measurements: [Measurement] = []
        /// Resident bytes per idle socket.
        var idleBytesPerSocket: Double?
    }

    struct Echo: BaseRequest {
        let url: String
    }

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> Report {
        var report = Report()
        guard names.contains(where: plan.includes) else { return report }
        let server = try ServerProcess()
        defer { server.stop() }
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        let agent = NetworkAgent(config: config, transport: CurlTransport())
        var noPing = WebSocketOptions()
        noPing.pingInterval = nil
        if plan.includes(roundTrip) {
            progress(roundTrip)
            let (count, warmup) = plan.counts(default: 20_000)
            report.measurements.append(try await roundTrips(agent, options: noPing, count: count, warmup: warmup))
        }
        for (name, compresses) in [(ratePlain, false), (rateDeflate, true)] where plan.includes(name) {
            progress(name)
            let (count, _) = plan.counts(default: 500_000)
            var options = noPing
            options.compression = compresses
            report.measurements.append(try await receiveRate(name, agent, options: options, count: count))
        }
        if plan.includes(fanIn) {
            progress(fanIn)
            report.measurements.append(try await fanInCPU(agent, options: noPing))
        }
        if plan.includes(idleMemory) {
            progress(idleMemory)
            report.idleBytesPerSocket = try await idleBytesPerSocket(agent, options: noPing)
        }
        return report
    }

    private static func roundTrips(_ agent: NetworkAgent, options: WebSocketOptions, count: Int, warmup: Int)
        async throws -> Measurement
    {
        let socket = try await agent.webSocket(Echo(url: "/ws/echo"), options: options)
        var messages = socket.makeAsyncIterator()
        let text = String(repeating: "x", count: 64)
        for _ in 0..<warmup {
            try await socket.send(text)
            _ = try await messages.next()
        }
        let clock = ContinuousClock()
        var samples: [Duration] = []
        samples.reserveCapacity(count)
        let began = clock.now
        let cpuStart = ProcessCPU.now()
        for _ in 0..<count {
            let sent = clock.now
            try await socket.send(text)
            guard case .text = try await messages.next() else {
                throw BenchmarkError(description: "\(roundTrip): the echo did not come back")
            }
            samples.append(clock.now - sent)
        }
        let measurement = Measurement(
            name: roundTrip, operations: count, samples: samples, wall: clock.now - began,
            cpu: ProcessCPU.now() - cpuStart)
        await socket.close()
        return measurement
    }

    private static func receiveRate(_ name: String, _ agent: NetworkAgent, options: WebSocketOptions, count: Int)
        async throws -> Measurement
    {
        let socket = try await agent.webSocket(Echo(url: "/ws/echo?flood=\(count)&size=1024"), options: options)
        guard socket.isCompressed == options.compression else {
            throw BenchmarkError(description: "\(name): compression was not agreed as asked")
        }
        var messages = socket.makeAsyncIterator()
        let clock = ContinuousClock()
        let began = clock.now
        let cpuStart = ProcessCPU.now()
        for _ in 0..<count {
            guard case .binary(let data) = try await messages.next(), data.count == 1024 else {
                throw BenchmarkError(description: "\(name): a message was lost or changed")
            }
        }
        let measurement = Measurement(
            name: name, operations: count, samples: [clock.now - began], wall: clock.now - began,
            cpu: ProcessCPU.now() - cpuStart)
        await socket.close()
        return measurement
    }

    /// Opens `socketCount` sockets to `url`.
    private static func open(_ agent: NetworkAgent, url: String, options: WebSocketOptions) async throws
        -> [WebSocket]
    {
        try await withThrowingTaskGroup(of: WebSocket.self) { group in
            var sockets: [WebSocket] = []
            var started = 0
            // At most 50 handshakes at once: the server accepts from one thread.
            while started < min(50, socketCount) {
                group.addTask { try await agent.webSocket(Echo(url: url), options: options) }
                started += 1
            }
            while let socket = try await group.next() {
                sockets.append(socket)
                if started < socketCount {
                    group.addTask { try await agent.webSocket(Echo(url: url), options: options) }
                    started += 1
                }
            }
            return sockets
        }
    }

    private static func fanInCPU(_ agent: NetworkAgent, options: WebSocketOptions) async throws -> Measurement {
        let ticks = 100
        let sockets = try await open(agent, url: "/ws/echo?ticks=\(ticks)&tick_ms=100", options: options)
        let clock = ContinuousClock()
        let began = clock.now
        let cpuStart = ProcessCPU.now()
        let received = try await withThrowingTaskGroup(of: Int.self) { group in
            for socket in sockets {
                group.addTask {
                    var messages = socket.makeAsyncIterator()
                    for _ in 0..<ticks {
                        guard case .text = try await messages.next() else { return 0 }
                    }
                    return ticks
                }
            }
            return try await group.reduce(0, +)
        }
        let measurement = Measurement(
            name: fanIn, operations: received, samples: [clock.now - began], wall: clock.now - began,
            cpu: ProcessCPU.now() - cpuStart)
        await withTaskGroup(of: Void.self) { group in
            for socket in sockets { group.addTask { await socket.close() } }
        }
        guard received == socketCount * ticks else {
            throw BenchmarkError(description: "\(fanIn): \(received) messages of \(socketCount * ticks)")
        }
        return measurement
    }

    private static func idleBytesPerSocket(_ agent: NetworkAgent, options: WebSocketOptions) async throws -> Double {
        // One socket first, so what every socket shares (threads, zlib itself) is counted before.
        let first = try await agent.webSocket(Echo(url: "/ws/echo"), options: options)
        let before = PeakMemory.resident() ?? 0
        let sockets = try await open(agent, url: "/ws/echo", options: options)
        guard sockets.allSatisfy(\.isCompressed) else {
            throw BenchmarkError(description: "\(idleMemory): compression was not agreed")
        }
        let after = PeakMemory.resident() ?? 0
        await withTaskGroup(of: Void.self) { group in
            for socket in sockets + [first] { group.addTask { await socket.close() } }
        }
        return Double(after - before) * 1024 / Double(sockets.count)
    }
}
