import Foundation

/// What to run, from the command line: which benchmarks, how many rounds, how much work each.
///
/// Benchmark names have dot-separated parts, group first (`websocket.fan-in`,
/// `loopback.c16.errand-async`, `scale.1000.ahc`); `--only` selects whole parts from the left,
/// so `--only scale.100` runs the 100-stream benchmarks and not the 1,000-stream ones.
struct Plan: Sendable {
    static let usage = """
        usage: PeerBenchmarks [--only NAME]... [--rounds N] [--requests N] [--seconds S]
                              [--server PATH] [--python PATH] [--list]

          --only NAME     run the benchmarks whose name is NAME or starts with NAME and a dot
                          (`loopback`, `loopback.c16`, `scale.1000`, `websocket.fan-in`);
                          repeat to run several. Default: everything
          --rounds N      alternating rounds, each client's median reported (default 3)
          --requests N    loopback: requests per client per round at each concurrency, after
                          a tenth as many unmeasured (default 3000)
          --seconds S     scale: seconds of events once every stream is open, one a second on
                          each stream (default 10)
          --server PATH   the root package's ErrandBenchmarks, the HTTP and WebSocket server and
                          the bare-libcurl baseline (default ../../.build/release/ErrandBenchmarks)
          --python PATH   the python3 that runs sse_server.py for scale.* (default python3)
          --list          print the benchmark names, one a line, and exit
        """

    /// Every benchmark name, in the order they run.
    static var allNames: [String] {
        Suite.names + LoopbackSuite.names + ScaleSuite.names
    }

    var only: [String] = []
    var rounds = 3
    var requests = 3_000
    var seconds = 10
    var server = "../../.build/release/ErrandBenchmarks"
    var python = "python3"
    var listOnly = false
    var helpOnly = false

    init(arguments: [String]) throws(PeerError) {
        var remaining = arguments[...]
        func positive(_ option: String) throws(PeerError) -> Int {
            guard let value = remaining.popFirst().flatMap({ Int($0) }), value > 0 else {
                throw PeerError("\(option) needs a positive whole number")
            }
            return value
        }
        func text(_ option: String) throws(PeerError) -> String {
            guard let value = remaining.popFirst() else { throw PeerError("\(option) needs a value") }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--only":
                let name = try text(argument)
                guard Self.allNames.contains(where: { Self.name($0, isSelectedBy: name) }) else {
                    throw PeerError("no benchmark is called \(name); --list shows them")
                }
                only.append(name)
            case "--rounds": rounds = try positive(argument)
            case "--requests": requests = try positive(argument)
            case "--seconds": seconds = try positive(argument)
            case "--server": server = try text(argument)
            case "--python": python = try text(argument)
            case "--list": listOnly = true
            case "--help", "-h": helpOnly = true
            default: throw PeerError("unknown argument \(argument)")
            }
        }
    }

    func includes(_ name: String) -> Bool {
        only.isEmpty || only.contains { Self.name(name, isSelectedBy: $0) }
    }

    /// Whole parts only: `scale.100` selects `scale.100.errand`, not `scale.1000.errand`.
    private static func name(_ name: String, isSelectedBy selector: String) -> Bool {
        name == selector || name.hasPrefix(selector + ".")
    }
}
