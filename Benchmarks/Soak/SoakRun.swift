import Errand
import Foundation

/// The soak itself, in the child process ``SoakBenchmark`` supervises: starts the servers, holds
/// the load for the soak's length while it samples the process, winds everything down, checks
/// the invariants and exits 0 when all held, 1 when one broke.
///
/// What must hold: every request ends exactly once and its events are whole, with nothing after
/// `didFinish`; every message sent on a socket that stayed open arrives, in order, on that
/// socket, unchanged; a socket ends only when the proxy's plan for it says so; every event of
/// every stream arrives once, in order, across reconnects, and no stream starves; every answer
/// and every downloaded byte is the server's; descriptors, threads and memory do not grow from
/// the first minutes to the last; connections are reused rather than opened per request.
enum SoakRun {
    static func runAndExit(_ arguments: [String]) async -> Never {
        var options = SoakOptions()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard (try? options.parse(argument, &remaining)) == true else {
                fail("soak: unknown argument \(argument)", status: 2)
            }
        }
        do {
            let broken = try await run(options)
            exit(broken ? 1 : 0)
        } catch {
            fail("soak: \(error)", status: 2)
        }
    }

    /// Whether an invariant broke.
    private static func run(_ options: SoakOptions) async throws -> Bool {
        let tally = SoakTally()
        print(
            """
            Errand soak: \(String(format: "%g", options.minutes)) min under \(options.transport.rawValue), \
            \(options.sockets) WebSockets, \(options.streams) event streams, \(options.workers) request workers, \
            faults \(options.faults ? "on" : "off"), seed \(options.seed), \
            \(options.connectionsPerHost.map { "\($0) connections per host" } ?? "default connections per host"), \
            pid \(getpid())
            """)
        let server = try SoakServer(seed: options.seed, faults: options.faults)
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("errand-soak-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let ledger = SoakLedger(tally: tally)
        let agent = makeAgent(options, server: server, ledger: ledger, folder: folder)
        let sockets = SocketFleet(
            count: options.sockets, agent: agent, port: server.webSocketPort, tally: tally, faults: options.faults,
            seed: options.seed)
        let streams = StreamFleet(
            count: options.streams, agent: agent, port: server.ssePort, tally: tally, seed: options.seed &+ 1)
        let mix = RequestMix(
            agent: agent, tally: tally, folder: folder.appendingPathComponent("downloads"), workers: options.workers,
            seed: options.seed &+ 2)

        let stopRequests = Flag()
        let requestsTask = Task { await mix.run(until: stopRequests) }
        let socketsTask = Task { await sockets.run() }
        let streamsTask = Task { await streams.run() }

        let status = SoakStatus(tally: tally, sockets: sockets, streams: streams, ledger: ledger)
        let samples = await status.watch(until: options.seconds)
        let during = try? await server.reports()

        print("\(tally.stamp) the load ends: requests finish, echoes are awaited, sockets close, streams stop")
        stopRequests.set()
        _ = await sockets.close(patience: 15)
        socketsTask.cancel()
        streamsTask.cancel()
        for (name, task) in [("requests", requestsTask), ("sockets", socketsTask), ("streams", streamsTask)] {
            guard await finishes(task, within: 90) else {
                tally.breach("every request ends exactly once", "the \(name) did not wind down within 90 s")
                continue
            }
        }
        await settle(ledger, tally: tally)
        let after = try? await server.reports()
        SoakReport(
            options: options, tally: tally, samples: samples, during: during, after: after, server: server,
            longestSilence: streams.longestSilence, droppedMonitorEvents: agent.config.droppedMonitorEventCount
        ).print()
        return !tally.broken.isEmpty
    }

    private static func makeAgent(_ options: SoakOptions, server: SoakServer, ledger: SoakLedger, folder: URL)
        -> NetworkAgent
    {
        let config = NetworkConfig()
        config.baseUrl = "http://127.0.0.1:\(server.httpPort)"
        config.cacheDirectory = folder.appendingPathComponent("cache")
        config.callbackQueue = DispatchQueue(label: "ErrandBenchmarks.soak.callbacks")
        config.addEventMonitor(ledger)
        config.addRequestAccessory(ledger)
        // As an app would: idempotent requests retried after a network failure.
        config.addInterceptor(RetryPolicy(maxAttempts: 3, baseDelay: 0.2, maxDelay: 2))
        if let perHost = options.connectionsPerHost { config.connection.maximumConnectionsPerHost = perHost }
        let transport: any Transport =
            switch options.transport {
            case .curl: CurlTransport(configuration: config.sessionConfiguration, connection: config.connection)
            case .urlsession:
                URLSessionTransport(configuration: config.sessionConfiguration, connection: config.connection)
            }
        return NetworkAgent(config: config, transport: transport)
    }

    /// Waits up to 30 s for every task to be whole; what is left never ended.
    private static func settle(_ ledger: SoakLedger, tally: SoakTally) async {
        let deadline = tally.elapsed + 30
        while ledger.runningCount > 0, tally.elapsed < deadline {
            try? await Task.sleep(for: .milliseconds(200))
        }
        for (url, age, finished) in ledger.unfinished().prefix(1000) {
            tally.breach(
                "every request ends exactly once",
                "\(url) started \(String(format: "%.0f", age)) s before the end and "
                    + (finished ? "finished, but its accessories were never told" : "never finished"))
        }
    }

    /// Whether `task` ends within `seconds`.
    private static func finishes(_ task: Task<Void, Never>, within seconds: Double) async -> Bool {
        let first = FirstOf()
        return await withCheckedContinuation { continuation in
            first.arm(continuation)
            Task {
                await task.value
                first.resolve(true)
            }
            Task {
                try? await Task.sleep(for: .seconds(seconds))
                first.resolve(false)
            }
        }
    }
}

/// Resumes a waiter with the first of several answers.
private final class FirstOf: @unchecked Sendable {  // `continuation` only under `lock`
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Bool, Never>?

    func arm(_ continuation: CheckedContinuation<Bool, Never>) {
        lock.withLock { self.continuation = continuation }
    }

    func resolve(_ value: Bool) {
        let waiting = lock.withLock { () -> CheckedContinuation<Bool, Never>? in
            defer { continuation = nil }
            return continuation
        }
        waiting?.resume(returning: value)
    }
}
