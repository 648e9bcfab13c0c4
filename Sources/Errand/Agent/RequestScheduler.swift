import Dispatch

/// An agent's bookkeeping of its tasks, under one lock: which are live, which attempts hold one
/// of the `maxConcurrent` slots, which wait for one (higher priority first, then by arrival),
/// and which download target each task claims. Finishing a task releases all of it at once.
final class RequestScheduler: Sendable {
    typealias Job = @Sendable () -> Void

    /// Why a download target could not be claimed.
    enum ClaimFailure: Error {
        /// The task finished (was cancelled) first: nothing to do.
        case finished
        /// Another live task downloads to the same file.
        case taken
    }

    private struct Waiting {
        let id: ObjectIdentifier
        let priority: RequestPriority
        let job: Job
    }

    private struct State {
        var maxConcurrent: Int
        var live: [ObjectIdentifier: RequestTask] = [:]
        var running: Set<ObjectIdentifier> = []
        /// Kept sorted: by priority, highest first, then by arrival.
        var waiting: [Waiting] = []
        var downloadTargets: [String: ObjectIdentifier] = [:]
    }

    private let state: Locked<State>
    /// Where a job starts when a slot frees up: never on the thread that freed it, which may be
    /// a transport's, or a caller's main thread that cancelled a task.
    private let launcher = DispatchQueue.global(qos: .userInitiated)

    init(maxConcurrent: Int) {
        state = Locked(State(maxConcurrent: max(1, maxConcurrent)))
    }

    var maxConcurrent: Int {
        get { state[\.maxConcurrent] }
        set {
            state.withLock { $0.maxConcurrent = max(1, newValue) }
            startWaitingJobs()
        }
    }

    /// The tasks started and not yet finished, queued ones first.
    var liveTasks: [RequestTask] {
        state.withLock { state in
            let running = state.live.filter { state.running.contains($0.key) }.map(\.value)
            return state.live.filter { !state.running.contains($0.key) }.map(\.value) + running
        }
    }

    /// Records `task` as live, until ``finish(_:)``.
    func register(_ task: RequestTask) {
        state.withLock { $0.live[ObjectIdentifier(task)] = task }
    }

    /// Claims `path` for the download of `task`, released when the task finishes.
    func claimDownloadTarget(_ path: String, for task: RequestTask) throws(ClaimFailure) {
        let id = ObjectIdentifier(task)
        let failure = state.withLock { state -> ClaimFailure? in
            guard state.live[id] != nil else { return .finished }
            if let owner = state.downloadTargets[path], owner != id { return .taken }
            state.downloadTargets[path] = id
            return nil
        }
        if let failure { throw failure }
    }

    /// Runs `job` for an attempt of `task` now, on this thread, if a slot is free; else later.
    /// Each job that runs holds a slot until ``release(_:)`` or ``finish(_:)``. A job enqueued
    /// with `bypassingLimit` runs at once: it works for an attempt that already holds a slot.
    func enqueue(_ task: RequestTask, priority: RequestPriority, bypassingLimit: Bool = false, job: @escaping Job) {
        let id = ObjectIdentifier(task)
        let runsNow = state.withLock { state -> Bool in
            guard state.live[id] != nil else { return false }
            if bypassingLimit || (state.running.count < state.maxConcurrent && state.waiting.isEmpty) {
                state.running.insert(id)
                return true
            }
            let index = state.waiting.firstIndex { $0.priority < priority } ?? state.waiting.endIndex
            state.waiting.insert(Waiting(id: id, priority: priority, job: job), at: index)
            return false
        }
        if runsNow { job() } else { startWaitingJobs() }
    }

    /// Frees the slot the attempt of `task` held, if any.
    func release(_ task: RequestTask) {
        let freed = state.withLock { $0.running.remove(ObjectIdentifier(task)) != nil }
        if freed { startWaitingJobs() }
    }

    /// Forgets `task`: its slot, its place in the queue and its download target.
    func finish(_ task: RequestTask) {
        let id = ObjectIdentifier(task)
        let freed = state.withLock { state -> Bool in
            state.live[id] = nil
            state.waiting.removeAll { $0.id == id }
            state.downloadTargets = state.downloadTargets.filter { $0.value != id }
            return state.running.remove(id) != nil
        }
        if freed { startWaitingJobs() }
    }

    private func startWaitingJobs() {
        let jobs = state.withLock { state -> [Job] in
            var jobs: [Job] = []
            while state.running.count < state.maxConcurrent, !state.waiting.isEmpty {
                let next = state.waiting.removeFirst()
                state.running.insert(next.id)
                jobs.append(next.job)
            }
            return jobs
        }
        for job in jobs {
            launcher.async(execute: job)
        }
    }
}
