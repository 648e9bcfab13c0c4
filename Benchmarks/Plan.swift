/// What to run, from the command line.
struct Plan: Sendable {
    static let usage = """
        usage: ErrandBenchmarks [--only NAME]... [--iterations N] [--allocations] [--list] [soak flags]

          --only NAME       run only the benchmark NAME, or the group NAME (such as
                            `loopback`, `stream` or `overhead.async`); repeat to run several.
                            `connection` needs a server: ERRAND_BENCH_H2_URL and
                            ERRAND_BENCH_H2_CA, as Benchmarks/h2-server.sh prints them.
                            `soak` runs only when named: half an hour by default
          --iterations N    measure N operations per benchmark instead of its default
          --allocations     count heap allocations (glibc only) and print allocs/op; the
                            count costs every allocation, so time benchmarks without it
          --list            print the benchmark names and exit

        """ + SoakOptions.usage

    /// Every benchmark name, in the order they run.
    static let allNames =
        OverheadBenchmarks.names + MonitorBenchmarks.names + EncodingBenchmarks.names + CookieBenchmarks.names
        + CacheBenchmarks.names
        + RevalidationBenchmarks.names + ComposeBenchmarks.names
        + HandOffBenchmarks.names + LoopbackBenchmarks.names + ConnectionBenchmarks.names
        + TransferBenchmarks.names + ResumedUploadBenchmark.names + StreamBenchmarks.names + WebSocketBenchmarks.names
        + [SoakBenchmark.name]

    var only: [String] = []
    var iterations: Int?
    var countsAllocations = false
    var listOnly = false
    var helpOnly = false
    var soak = SoakOptions()

    init(arguments: [String]) throws(BenchmarkError) {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--only":
                guard let name = remaining.popFirst() else { throw BenchmarkError(description: "--only needs a name") }
                guard Self.allNames.contains(where: { Self.name($0, isSelectedBy: name) }) else {
                    throw BenchmarkError(description: "no benchmark is called \(name); --list shows them")
                }
                only.append(name)
            case "--iterations":
                guard let value = remaining.popFirst().flatMap(Int.init), value > 0 else {
                    throw BenchmarkError(description: "--iterations needs a positive whole number")
                }
                iterations = value
            case "--allocations":
                countsAllocations = true
            case "--list":
                listOnly = true
            case "--help", "-h":
                helpOnly = true
            default:
                guard try soak.parse(argument, &remaining) else {
                    throw BenchmarkError(description: "unknown argument \(argument)")
                }
            }
        }
    }

    func includes(_ name: String) -> Bool {
        // The soak takes half an hour: it runs only when named.
        guard name != SoakBenchmark.name else { return only.contains(name) }
        return only.isEmpty || only.contains { Self.name(name, isSelectedBy: $0) }
    }

    /// Operations to measure, and to run unmeasured first so caches, connections and thread
    /// pools are warm; a tenth as many.
    func counts(default defaultCount: Int) -> (measured: Int, warmup: Int) {
        let measured = iterations ?? defaultCount
        return (measured, max(1, measured / 10))
    }

    /// Matches whole dot-separated parts, so `loopback.errand` selects `loopback.errand.sequential`
    /// but `loop` selects nothing.
    private static func name(_ name: String, isSelectedBy selector: String) -> Bool {
        name == selector || name.hasPrefix(selector + ".")
    }
}
