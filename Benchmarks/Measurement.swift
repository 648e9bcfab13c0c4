import CErrandAllocationCounter
import Foundation

/// One benchmark's outcome: the time each operation took, and the wall time of the whole run.
///
/// Per-operation samples give latency (median, p90); the wall time gives throughput, which
/// also counts what the samples miss, such as the hand-off from one request to the next.
struct Measurement: Sendable {
    let name: String
    let operations: Int
    /// Nanoseconds per operation, sorted ascending.
    let samples: [Double]
    let wallNanoseconds: Double
    /// CPU time the whole process used during the run, every thread and the embedded server
    /// included. On a shared machine it varies less than wall time, and on two cores it is
    /// what bounds throughput.
    let cpuNanoseconds: Double
    /// Heap allocations the whole process made during the run, with `--allocations`; else `nil`.
    let allocations: UInt64?

    init(
        name: String, operations: Int, samples: [Duration], wall: Duration, cpu: Duration,
        allocations: UInt64? = nil
    ) {
        self.name = name
        self.operations = operations
        self.samples = samples.map(\.nanoseconds).sorted()
        self.wallNanoseconds = wall.nanoseconds
        self.cpuNanoseconds = cpu.nanoseconds
        self.allocations = allocations
    }

    var median: Double { percentile(50) }
    var p90: Double { percentile(90) }

    /// Operations per second over the whole run.
    var throughput: Double {
        wallNanoseconds > 0 ? Double(operations) / (wallNanoseconds / 1e9) : 0
    }

    var cpuPerOperation: Double {
        operations > 0 ? cpuNanoseconds / Double(operations) : 0
    }

    var allocationsPerOperation: Double? {
        allocations.map { operations > 0 ? Double($0) / Double(operations) : 0 }
    }

    /// Nearest-rank percentile: a value that was actually observed, never an interpolation.
    func percentile(_ p: Double) -> Double {
        guard !samples.isEmpty else { return 0 }
        let rank = Int((p / 100 * Double(samples.count)).rounded(.up))
        return samples[min(max(rank, 1), samples.count) - 1]
    }
}

/// Times operations too fast for one clock reading each: the clock itself costs tens of
/// nanoseconds, so each sample is the mean of a batch.
enum Microbenchmark {
    static func measure(
        _ name: String, iterations: Int, warmup: Int, batch: Int = 100, _ body: () throws -> Void
    ) rethrows -> Measurement {
        let clock = ContinuousClock()
        for _ in 0..<warmup { try body() }
        let batches = max(1, iterations / batch)
        var samples: [Duration] = []
        samples.reserveCapacity(batches)
        let start = clock.now
        let cpuStart = ProcessCPU.now()
        let allocationStart = ProcessAllocations.now()
        for _ in 0..<batches {
            let batchStart = clock.now
            for _ in 0..<batch { try body() }
            samples.append((clock.now - batchStart) / batch)
        }
        return Measurement(
            name: name, operations: batches * batch, samples: samples, wall: clock.now - start,
            cpu: ProcessCPU.now() - cpuStart, allocations: ProcessAllocations.since(allocationStart))
    }
}

/// User plus system time of the whole process.
enum ProcessCPU {
    static func now() -> Duration {
        #if os(Linux)
            let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
            let who = RUSAGE_SELF
        #endif
        var usage = rusage()
        guard getrusage(who, &usage) == 0 else { return .zero }
        func duration(_ time: timeval) -> Duration {
            .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec))
        }
        return duration(usage.ru_utime) + duration(usage.ru_stime)
    }
}

/// The heap allocations of the whole process, every thread, counted by `CErrandAllocationCounter`
/// once `--allocations` turned it on.
enum ProcessAllocations {
    /// Whether this platform can count them: glibc's.
    static var isAvailable: Bool { errand_allocation_counting_available() != 0 }

    static func start() { errand_allocation_counting_enable(1) }

    /// The count so far; 0 while not counting.
    static func now() -> UInt64 { errand_allocation_count() }

    /// Allocations since `start`, a reading of ``now()``; `nil` when not counting.
    static func since(_ start: UInt64) -> UInt64? {
        isCounting ? now() - start : nil
    }

    static var isCounting: Bool { errand_allocation_counting_enabled() != 0 }
}

/// A benchmark could not produce numbers worth printing, for example because requests failed.
struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
}

extension Duration {
    var nanoseconds: Double {
        Double(components.seconds) * 1e9 + Double(components.attoseconds) * 1e-9
    }
}

enum Format {
    static func duration(nanoseconds ns: Double) -> String {
        switch ns {
        case ..<1_000: String(format: "%.0f ns", ns)
        case ..<1_000_000: String(format: "%.1f µs", ns / 1e3)
        default: String(format: "%.2f ms", ns / 1e6)
        }
    }

    static func rate(_ perSecond: Double) -> String {
        switch perSecond {
        case ..<1_000: String(format: "%.0f /s", perSecond)
        case ..<1_000_000: String(format: "%.2f k/s", perSecond / 1e3)
        default: String(format: "%.2f M/s", perSecond / 1e6)
        }
    }

    static func count(_ n: Int) -> String {
        n >= 10_000 && n % 1_000 == 0 ? "\(n / 1_000)k" : "\(n)"
    }

    /// Left-aligns the first column and right-aligns the rest, so numbers line up.
    static func table(header: [String], rows: [[String]]) -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let padding = String(repeating: " ", count: widths[column] - cell.count)
                return column == 0 ? cell + padding : padding + cell
            }.joined(separator: "  ")
        }
        let rule = widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n")
    }
}
