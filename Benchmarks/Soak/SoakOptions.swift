import Foundation

/// How the soak runs: its length, its transport and its load, from the command line.
struct SoakOptions: Sendable, Equatable {
    /// The transport under the agent.
    enum Transport: String, Sendable {
        case curl
        case urlsession
    }

    static let usage = """
        soak: ErrandBenchmarks --only soak [--minutes M] [--transport curl|urlsession] [--sockets N]
                                [--streams N] [--workers N] [--seed N] [--no-faults]
                                [--connections-per-host N]
          --minutes M       how long the load runs, default 30 (fractions allowed)
          --transport T     curl or urlsession; default ERRAND_TRANSPORT, else curl
          --sockets N       WebSockets held open, default 50
          --streams N       Server-Sent Event streams held open, default 200
          --workers N       requests in flight in the GET/POST/download mix, default 6
          --seed N          seeds every random choice, default 1
          --no-faults       the proxy relays without latency, stalls, resets, caps or idle closes
          --connections-per-host N
                            ConnectionOptions.maximumConnectionsPerHost, default the library's (6);
                            a value above the streams' count keeps streams from queueing for one
        """

    var minutes = 30.0
    var transport =
        Transport(rawValue: ProcessInfo.processInfo.environment["ERRAND_TRANSPORT"]?.lowercased() ?? "")
        ?? .curl
    var sockets = 50
    var streams = 200
    var workers = 6
    var seed: UInt64 = 1
    var faults = true
    /// `nil` for the library's default.
    var connectionsPerHost: Int?

    var seconds: Double { minutes * 60 }

    /// Reads `--minutes` and the other soak flags from `arguments`; `nil` when `argument` is not one.
    mutating func parse(_ argument: String, _ remaining: inout ArraySlice<String>) throws(BenchmarkError) -> Bool {
        func value() throws(BenchmarkError) -> String {
            guard let value = remaining.popFirst() else {
                throw BenchmarkError(description: "\(argument) needs a value")
            }
            return value
        }
        func count(_ range: ClosedRange<Int>) throws(BenchmarkError) -> Int {
            guard let number = Int(try value()), range.contains(number) else {
                throw BenchmarkError(description: "\(argument) needs a whole number in \(range)")
            }
            return number
        }
        switch argument {
        case "--minutes":
            guard let value = Double(try value()), value > 0, value <= 24 * 60 else {
                throw BenchmarkError(description: "--minutes needs a number of minutes above 0")
            }
            minutes = value
        case "--transport":
            guard let kind = Transport(rawValue: try value()) else {
                throw BenchmarkError(description: "--transport is curl or urlsession")
            }
            transport = kind
        case "--sockets": sockets = try count(1...1000)
        case "--streams": streams = try count(0...2000)
        case "--workers": workers = try count(1...64)
        case "--seed": seed = UInt64(try count(0...Int.max))
        case "--no-faults": faults = false
        case "--connections-per-host": connectionsPerHost = try count(1...10_000)
        default: return false
        }
        return true
    }

    /// The flags that make another process run with these options.
    var arguments: [String] {
        [
            "--minutes", String(minutes), "--transport", transport.rawValue, "--sockets", String(sockets), "--streams",
            String(streams), "--workers", String(workers), "--seed", String(seed),
        ] + (faults ? [] : ["--no-faults"])
            + (connectionsPerHost.map { ["--connections-per-host", String($0)] } ?? [])
    }
}
