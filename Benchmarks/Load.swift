import Foundation

/// Says how one operation ended: `nil` for success, else why it failed.
typealias Outcome = @Sendable (_ failure: String?) -> Void

/// Drives many requests and records each one's latency, from start to callback.
///
/// Concurrent runs keep exactly `inFlight` operations going by starting the next one from each
/// completion, as a client working through a list would; nothing waits in a queue, so the
/// latency is that of a request competing with `inFlight - 1` others.
enum Load {
    /// Runs `total` callback-style operations after `warmup` unmeasured ones.
    static func callbacks(
        _ name: String, total: Int, warmup: Int, inFlight: Int,
        start: @escaping @Sendable (_ done: @escaping Outcome) -> Void
    ) async throws -> Measurement {
        if warmup > 0 {
            _ = try await Pump(total: warmup, start: start).run(inFlight: inFlight)
        }
        let clock = ContinuousClock()
        let began = clock.now
        let cpuStart = ProcessCPU.now()
        let allocationStart = ProcessAllocations.now()
        let latencies = try await Pump(total: total, start: start).run(inFlight: inFlight)
        return Measurement(
            name: name, operations: total, samples: latencies, wall: clock.now - began,
            cpu: ProcessCPU.now() - cpuStart, allocations: ProcessAllocations.since(allocationStart))
    }

    /// Runs `total` async operations, `inFlight` child tasks each awaiting its share in turn.
    static func async(
        _ name: String, total: Int, warmup: Int, inFlight: Int,
        operation: @escaping @Sendable () async throws -> Void
    ) async throws -> Measurement {
        if warmup > 0 {
            _ = try await runAsync(total: warmup, inFlight: inFlight, operation: operation)
        }
        let clock = ContinuousClock()
        let began = clock.now
        let cpuStart = ProcessCPU.now()
        let allocationStart = ProcessAllocations.now()
        let latencies = try await runAsync(total: total, inFlight: inFlight, operation: operation)
        return Measurement(
            name: name, operations: total, samples: latencies, wall: clock.now - began,
            cpu: ProcessCPU.now() - cpuStart, allocations: ProcessAllocations.since(allocationStart))
    }

    private static func runAsync(
        total: Int, inFlight: Int, operation: @escaping @Sendable () async throws -> Void
    ) async throws -> [Duration] {
        let workers = max(1, min(inFlight, total))
        return try await withThrowingTaskGroup(of: [Duration].self) { group in
            for worker in 0..<workers {
                let share = total / workers + (worker < total % workers ? 1 : 0)
                group.addTask {
                    let clock = ContinuousClock()
                    var latencies: [Duration] = []
                    latencies.reserveCapacity(share)
                    for _ in 0..<share {
                        let start = clock.now
                        try await operation()
                        latencies.append(clock.now - start)
                    }
                    return latencies
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
    }
}

/// Keeps operations going until `total` have finished, or one fails; then resumes its caller.
private final class Pump: @unchecked Sendable {  // Sendable because every mutable field is guarded by `lock`.
    private let lock = NSLock()
    private let clock = ContinuousClock()
    private let total: Int
    private let start: @Sendable (@escaping Outcome) -> Void
    private var launched = 0
    private var finished = 0
    private var latencies: [Duration] = []
    private var failure: String?
    private var caller: CheckedContinuation<Void, Never>?

    init(total: Int, start: @escaping @Sendable (@escaping Outcome) -> Void) {
        self.total = total
        self.start = start
        latencies.reserveCapacity(total)
    }

    func run(inFlight: Int) async throws -> [Duration] {
        guard total > 0 else { return [] }
        await withCheckedContinuation { continuation in
            lock.withLock { caller = continuation }
            for _ in 0..<min(max(1, inFlight), total) { launchNext() }
        }
        return try lock.withLock {
            if let failure { throw BenchmarkError(description: failure) }
            return latencies
        }
    }

    private func launchNext() {
        let mayLaunch = lock.withLock {
            guard launched < total, failure == nil else { return false }
            launched += 1
            return true
        }
        guard mayLaunch else { return }
        let began = clock.now
        start { [self] failure in
            let elapsed = clock.now - began
            let caller = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                latencies.append(elapsed)
                finished += 1
                if let failure, self.failure == nil { self.failure = failure }
                let isDone = finished == total || (self.failure != nil && finished == launched)
                defer { if isDone { self.caller = nil } }
                return isDone ? self.caller : nil
            }
            if let caller {
                caller.resume()
            } else {
                launchNext()
            }
        }
    }
}
