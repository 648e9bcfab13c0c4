import Foundation

/// Says how one request ended: `nil` for success, else why it failed.
typealias Outcome = @Sendable (_ failure: String?) -> Void

/// Keeps exactly `inFlight` requests going, as the root package's `Load` does, so that the
/// loopback rows here and there are driven alike: callback clients start the next request from
/// each completion, async clients run `inFlight` child tasks that each await their share in turn.
/// Nothing waits in a queue of the benchmark's own, so a latency is that of a request competing
/// with `inFlight - 1` others.
enum Load {
    /// Runs `total` callback-style requests; each one's latency.
    static func callbacks(
        total: Int, inFlight: Int, start: @escaping @Sendable (_ done: @escaping Outcome) -> Void
    ) async throws -> [Duration] {
        try await Pump(total: total, start: start).run(inFlight: inFlight)
    }

    /// Runs `total` async requests, `inFlight` child tasks each awaiting its share in turn.
    static func async(
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

/// Keeps requests going until `total` have finished, or one failed; then resumes its caller.
private final class Pump: @unchecked Sendable {  // Sendable: every mutable field is guarded by `lock`.
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
            if let failure { throw PeerError(failure) }
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
