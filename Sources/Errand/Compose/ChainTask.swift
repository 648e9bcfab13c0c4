import Dispatch

/// One execution of a ``ChainRequest``: its steps run one after another, each step's callback
/// may add the next, and it calls back exactly once.
public final class ChainTask: RequestGroupTask {
    private struct State {
        var pending: [ChainStep]
        var runs: [MemberRun?] = []
        /// From a step's start until the chain moves past it.
        var current: MemberRun?
        var failedTask: RequestTask?
        var error: ErrandError?
        var isCancelled = false
        var isFinished = false
        var completion: GroupCompletion<ChainTask>?
    }

    private let agent: NetworkAgent
    private let accessories: [any RequestGroupAccessory]
    private let state: Locked<State>

    init(_ chain: ChainRequest, completion: GroupCompletion<ChainTask>) {
        agent = chain.agent
        accessories = chain.accessories
        state = Locked(State(pending: chain.steps, completion: completion))
    }

    // MARK: Public state

    /// The steps' request tasks so far, in the order they ran; a nested group's tasks in its place.
    public var tasks: [RequestTask] { state.withLock { $0.runs }.flatMap { $0?.tasks ?? [] } }

    /// The request task whose failure ended the chain; `nil` while running, after success, or
    /// when the chain was cancelled between steps.
    public var failedTask: RequestTask? { state[\.failedTask] }

    /// Why the chain failed: the failed step's error, or ``ErrandError/cancelled``.
    public var error: ErrandError? { state[\.error] }

    /// Whether ``cancel()`` was called before the chain finished.
    public var isCancelled: Bool { state[\.isCancelled] }

    /// Adds `request` as the last step; `callback`, when the step succeeds, gets its task (and
    /// may add the next step from its response). Ignored once the chain has finished.
    public func add(_ request: any BaseRequest, callback: (@Sendable (ChainTask, RequestTask) -> Void)? = nil) {
        append(ChainStep(member: .request(request), callback: callback.map { .request($0) }))
    }

    /// Adds `group`, a batch or another chain, as the last step; `callback` gets its task when it
    /// succeeds. Ignored once the chain has finished.
    public func add(
        _ group: any RequestGroup, callback: (@Sendable (ChainTask, any RequestGroupTask) -> Void)? = nil
    ) {
        append(ChainStep(member: .group(group), callback: callback.map { .group($0) }))
    }

    /// Stops the running step and drops the steps not yet started; the chain fails with
    /// ``ErrandError/cancelled``. Calling it again does nothing.
    public func cancel() {
        let current = state.withLock { state -> MemberRun? in
            guard !state.isCancelled, !state.isFinished else { return nil }
            state.isCancelled = true
            state.error = .cancelled
            state.pending = []
            return state.current
        }
        current?.cancel()
    }

    // MARK: Running

    private func append(_ step: ChainStep) {
        state.withLock { state in
            guard !state.isFinished else { return }
            state.pending.append(step)
        }
    }

    func start() {
        agent.groups.register(self)
        accessories.forEach { $0.requestGroupWillStart(self) }
        advance()
    }

    /// Starts the next step, or finishes when there is none or the chain was cancelled.
    private func advance() {
        let next = state.withLock { state -> ChainStep? in
            guard !state.isCancelled, !state.pending.isEmpty else { return nil }
            return state.pending.removeFirst()
        }
        guard let next else { return finish() }
        let index = state.withLock { state in
            state.runs.append(nil)
            return state.runs.count - 1
        }
        let run = MemberRun.make(next.member, agent: agent) { [self] in stepFinished(next, $0) }
        let cancelled = state.withLock { state in
            state.runs[index] = run
            if !state.isFinished { state.current = run }
            return state.isCancelled
        }
        if cancelled { run.cancel() }
        run.start(agent: agent)
    }

    private func stepFinished(_ step: ChainStep, _ run: MemberRun) {
        let failed = state.withLock { state in
            state.current = nil
            guard let error = run.error else { return false }
            state.failedTask = run.failedTask
            state.error = error
            return true
        }
        if failed { return finish() }
        // The step's callback is the user's: never on the thread that finished the step.
        let completion = state.withLock { $0.completion }
        let queue = completion?.workQueue(callbackQueue: agent.config.callbackQueue) ?? agent.config.callbackQueue
        queue.async { [self] in
            step.call(self, after: run)
            advance()
        }
    }

    private func finish() {
        let completion = state.withLock { state in
            state.isFinished = true
            state.pending = []
            defer { state.completion = nil }
            return state.completion
        }
        agent.groups.unregister(self)
        completion?.deliver(self, accessories: accessories, callbackQueue: agent.config.callbackQueue)
    }
}
