/// Starts at most `maxConcurrent` jobs at once; the rest wait, higher priority first, then in
/// the order they arrived.
final class RequestQueue: Sendable {
    typealias Job = @Sendable () -> Void

    private struct Waiting {
        let id: ObjectIdentifier
        let priority: RequestPriority
        let job: Job
    }

    private struct State {
        var maxConcurrent: Int
        var running = 0
        /// Kept sorted: by priority, highest first, then by arrival.
        var waiting: [Waiting] = []
    }

    private let state: Locked<State>

    init(maxConcurrent: Int) {
        state = Locked(State(maxConcurrent: max(1, maxConcurrent)))
    }

    var maxConcurrent: Int {
        get { state.withLock { $0.maxConcurrent } }
        set {
            state.withLock { $0.maxConcurrent = max(1, newValue) }
            startWaitingJobs()
        }
    }

    /// Runs `job` now if a slot is free, else when one frees up. Every job that starts must be
    /// followed by one call to ``jobFinished()``.
    func enqueue(id: ObjectIdentifier, priority: RequestPriority, job: @escaping Job) {
        state.withLock { state in
            let index = state.waiting.firstIndex { $0.priority < priority } ?? state.waiting.endIndex
            state.waiting.insert(Waiting(id: id, priority: priority, job: job), at: index)
        }
        startWaitingJobs()
    }

    /// Drops a job that has not started; `false` when it already started or was never queued.
    @discardableResult
    func remove(id: ObjectIdentifier) -> Bool {
        state.withLock { state in
            guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return false }
            state.waiting.remove(at: index)
            return true
        }
    }

    /// Frees the slot of a started job and starts the next waiting one.
    func jobFinished() {
        state.withLock { $0.running -= 1 }
        startWaitingJobs()
    }

    /// Jobs run outside the lock, so a job that finishes synchronously can call back in.
    private func startWaitingJobs() {
        while let job = state.withLock({ state -> Job? in
            guard state.running < state.maxConcurrent, !state.waiting.isEmpty else { return nil }
            state.running += 1
            return state.waiting.removeFirst().job
        }) {
            job()
        }
    }
}
