import Dispatch

/// One execution of a ``BatchRequest``: its members run at once and it calls back exactly once,
/// after every started member has reported.
public final class BatchTask: RequestGroupTask {
    private struct State {
        var runs: [MemberRun?]
        var finishedCount = 0
        var failedTask: RequestTask?
        var error: ErrandError?
        var isCancelled = false
        var isFinished = false
        var completion: GroupCompletion<BatchTask>?
    }

    private let agent: NetworkAgent
    private let members: [GroupMember]
    private let runsToEnd: Bool
    private let accessories: [any RequestGroupAccessory]
    private let progressClosure: (@Sendable (BatchProgress) -> Void)?
    private let progressValues: NewestValueStreams<BatchProgress>
    private let state: Locked<State>

    init(
        _ batch: BatchRequest, completion: GroupCompletion<BatchTask>,
        progress: (@Sendable (BatchProgress) -> Void)?
    ) {
        agent = batch.agent
        members = batch.members
        runsToEnd = batch.runsToEnd
        accessories = batch.accessories
        progressClosure = progress
        progressValues = NewestValueStreams(newest: BatchProgress(finished: 0, total: batch.members.count))
        state = Locked(State(runs: Array(repeating: nil, count: batch.members.count), completion: completion))
    }

    // MARK: Public state

    /// The members' request tasks in request order; a nested group's tasks in its place.
    public var tasks: [RequestTask] { state.withLock { $0.runs }.flatMap { $0?.tasks ?? [] } }

    /// The first request task to fail (by time); `nil` while running, after success, or when
    /// the batch was cancelled. With `runsToEnd`, the others' results are on ``tasks``.
    public var failedTask: RequestTask? { state[\.failedTask] }

    /// Why the batch failed: the first failure's error, or ``ErrandError/cancelled``.
    public var error: ErrandError? { state[\.error] }

    /// Whether ``cancel()`` was called before the batch finished.
    public var isCancelled: Bool { state[\.isCancelled] }

    /// Whether every member's response came from the cache; `false` until the batch succeeded.
    public var isDataFromCache: Bool {
        let tasks = tasks
        return error == nil && !tasks.isEmpty && tasks.allSatisfy(\.isDataFromCache)
    }

    /// Members finished so far out of all members.
    public var progress: BatchProgress {
        state.withLock { BatchProgress(finished: $0.finishedCount, total: $0.runs.count) }
    }

    /// The batch's progress: starts with the current value, then one value per finished member
    /// (only the newest kept when the reader falls behind), and ends when the batch does.
    public var progressUpdates: AsyncStream<BatchProgress> {
        progressValues.stream()
    }

    /// Stops every member, those not yet started included; the batch fails with
    /// ``ErrandError/cancelled`` once each started member has reported. Calling it again does nothing.
    public func cancel() {
        let runs = state.withLock { state -> [MemberRun]? in
            guard !state.isCancelled, !state.isFinished else { return nil }
            state.isCancelled = true
            state.error = state.error ?? .cancelled
            return state.runs.compactMap { $0 }
        }
        runs?.forEach { $0.cancel() }
    }

    // MARK: Running

    func start() {
        agent.groups.register(self)
        accessories.forEach { $0.requestGroupWillStart(self) }
        // Request tasks exist before any starts, so a failure cancels them all and each reports.
        for (index, member) in members.enumerated() {
            guard case .request = member else { continue }
            let run = MemberRun.make(member, agent: agent) { [self] in memberFinished(index, $0) }
            state.withLock { $0.runs[index] = run }
        }
        if members.isEmpty { return finish() }
        for (index, member) in members.enumerated() {
            startMember(member, at: index)
        }
    }

    private func startMember(_ member: GroupMember, at index: Int) {
        if case .request = member {
            state.withLock { $0.runs[index] }?.start(agent: agent)
            return
        }
        // A group not started before the batch ended never starts; it counts as finished.
        if state.withLock(isStopping) { return memberSkipped() }
        let run = MemberRun.make(member, agent: agent) { [self] in memberFinished(index, $0) }
        let stopsNow = state.withLock { state in
            state.runs[index] = run
            return isStopping(&state)
        }
        if stopsNow { run.cancel() }
    }

    private func isStopping(_ state: inout State) -> Bool {
        state.isCancelled || (state.error != nil && !runsToEnd)
    }

    private func memberSkipped() {
        let done = state.withLock { state in
            state.finishedCount += 1
            report(&state)
            return state.finishedCount == state.runs.count
        }
        if done { finish() }
    }

    private func memberFinished(_ index: Int, _ run: MemberRun) {
        let (siblings, done) = state.withLock { state in
            state.finishedCount += 1
            var siblings: [MemberRun] = []
            // The first failure names the batch's; a cancelled batch's error is already set.
            if let error = run.error, state.error == nil {
                state.failedTask = run.failedTask
                state.error = error
                if !runsToEnd {
                    siblings = state.runs.indices.filter { $0 != index }.compactMap { state.runs[$0] }
                }
            }
            report(&state)
            return (siblings, state.finishedCount == state.runs.count)
        }
        siblings.forEach { $0.cancel() }
        if done { finish() }
    }

    /// Hands the new count to the streams and queues the closure; under the lock, so that
    /// values never go backwards. Neither runs user code here.
    private func report(_ state: inout State) {
        let progress = BatchProgress(finished: state.finishedCount, total: state.runs.count)
        progressValues.publish(progress)
        guard let progressClosure else { return }
        agent.config.callbackQueue.async { progressClosure(progress) }
    }

    private func finish() {
        let completion = state.withLock { state in
            state.isFinished = true
            defer { state.completion = nil }
            return state.completion
        }
        progressValues.finish()
        agent.groups.unregister(self)
        completion?.deliver(self, accessories: accessories, callbackQueue: agent.config.callbackQueue)
    }
}
