import Dispatch

/// One run of a ``BatchRequest``: its steps' tasks, its progress, and how it ended.
public final class BatchTask: RequestGroupTask {
    /// The batch this task runs.
    public let request: BatchRequest

    private struct State {
        var steps: [ComposedStepTask?]
        var finishedSteps = 0
        var failedTask: RequestTask?
        var error: ErrandError?
        var isCancelled = false
        var isFinished = false
        var progressStreams: [Int: AsyncStream<BatchProgress>.Continuation] = [:]
        var nextStreamID = 0
    }

    private let agent: NetworkAgent
    private let completion: GroupCompletion<BatchTask>
    private let state: Locked<State>

    init(batch: BatchRequest, agent: NetworkAgent, completion: GroupCompletion<BatchTask>) {
        request = batch
        self.agent = agent
        self.completion = completion
        state = Locked(State(steps: Array(repeating: nil, count: batch.steps.count)))
    }

    // MARK: Reading

    /// Every request's task, in step order, nested groups' flattened in theirs. A step that
    /// has not started yet has none.
    public var tasks: [RequestTask] {
        state.withLock { $0.steps }.flatMap { $0?.tasks ?? [] }
    }

    /// The request whose failure failed the batch — the first to fail; `nil` while running and
    /// after a success.
    public var failedTask: RequestTask? { state[\.failedTask] }

    /// Why the batch failed; `nil` while running and after a success.
    public var error: ErrandError? { state[\.error] }

    /// Whether ``cancel()`` was called, on this batch or on a group it is a step of.
    public var isCancelled: Bool { state[\.isCancelled] }

    /// Whether the batch has ended.
    public var isFinished: Bool { state[\.isFinished] }

    /// Whether every request of the batch was answered from the cache.
    public var isDataFromCache: Bool {
        let tasks = tasks
        return !tasks.isEmpty && tasks.allSatisfy(\.isDataFromCache)
    }

    /// Steps finished of steps in the batch.
    public var progress: BatchProgress {
        BatchProgress(finished: state[\.finishedSteps], total: request.steps.count)
    }

    /// The batch's progress: the current value first, then one per finished step; the stream
    /// ends when the batch does.
    public var progressUpdates: AsyncStream<BatchProgress> {
        let (stream, continuation) = AsyncStream<BatchProgress>.makeStream()
        let (id, current, isFinished) = state.withLock { state in
            let id = state.nextStreamID
            state.nextStreamID += 1
            if !state.isFinished { state.progressStreams[id] = continuation }
            return (id, state.finishedSteps, state.isFinished)
        }
        continuation.yield(BatchProgress(finished: current, total: request.steps.count))
        if isFinished {
            continuation.finish()
        } else {
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.progressStreams.removeValue(forKey: id) }
            }
        }
        return stream
    }

    // MARK: Running

    /// Cancels every step; the batch then fails once, with ``ErrandError/cancelled``.
    public func cancel() {
        let steps = state.withLock { state -> [ComposedStepTask] in
            guard !state.isFinished, !state.isCancelled else { return [] }
            state.isCancelled = true
            return state.steps.compactMap { $0 }
        }
        steps.forEach { $0.cancel() }
    }

    func run() {
        agent.groups.register(self)
        request.accessories.forEach { $0.requestGroupWillStart(self) }
        guard !request.steps.isEmpty else { return finish() }
        for (index, step) in request.steps.enumerated() {
            let started = step.start(on: agent) { [self] finished in stepFinished(index, finished) }
            let cancelNow = state.withLock { state in
                if state.steps[index] == nil { state.steps[index] = started }
                return state.isCancelled
            }
            if cancelNow { started.cancel() }
        }
    }

    private func stepFinished(_ index: Int, _ step: ComposedStepTask) {
        let (siblings, progress, isLast) = state.withLock { state in
            state.steps[index] = step
            state.finishedSteps += 1
            var siblings: [ComposedStepTask] = []
            if let error = step.error, state.error == nil {
                state.failedTask = step.failedTask
                state.error = state.isCancelled ? .cancelled : error
                if !request.runsToEnd && !state.isCancelled {
                    state.isCancelled = true
                    siblings = state.steps.indices.filter { $0 != index }.compactMap { state.steps[$0] }
                }
            }
            let progress = BatchProgress(finished: state.finishedSteps, total: request.steps.count)
            return (siblings, progress, state.finishedSteps == request.steps.count)
        }
        siblings.forEach { $0.cancel() }
        report(progress)
        if isLast { finish() }
    }

    private func report(_ progress: BatchProgress) {
        let streams = state.withLock { Array($0.progressStreams.values) }
        streams.forEach { $0.yield(progress) }
        guard let handler = request.progress else { return }
        agent.config.callbackQueue.async { handler(progress) }
    }

    private func finish() {
        let streams = state.withLock { state in
            state.isFinished = true
            defer { state.progressStreams = [:] }
            return Array(state.progressStreams.values)
        }
        streams.forEach { $0.finish() }
        agent.groups.unregister(self)
        completion.deliver(
            self, succeeded: error == nil, accessories: request.accessories, callbackQueue: agent.config.callbackQueue)
    }
}
