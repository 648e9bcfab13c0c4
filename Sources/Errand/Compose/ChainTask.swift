import Dispatch

/// One run of a ``ChainRequest``: the steps it ran, and how it ended. Steps can be added while
/// it runs, from a step's callback or from anywhere else.
public final class ChainTask: RequestGroupTask {
    private struct State {
        var links: [ChainRequest.Link]
        var steps: [ComposedStepTask] = []
        /// The step running now, or `nil` between steps.
        var current: ComposedStepTask?
        var failedTask: RequestTask?
        var error: ErrandError?
        var isCancelled = false
        var isFinished = false
    }

    private let agent: NetworkAgent
    private let accessories: [any RequestAccessory]
    private let completion: GroupCompletion<ChainTask>
    private let state: Locked<State>

    init(
        links: [ChainRequest.Link], accessories: [any RequestAccessory], agent: NetworkAgent,
        completion: GroupCompletion<ChainTask>
    ) {
        self.agent = agent
        self.accessories = accessories
        self.completion = completion
        state = Locked(State(links: links))
    }

    // MARK: Reading

    /// Every request's task so far, in the order they ran, nested groups' flattened in theirs.
    public var tasks: [RequestTask] {
        state.withLock { $0.steps }.flatMap(\.tasks)
    }

    /// The request whose failure ended the chain; `nil` while running and after a success.
    public var failedTask: RequestTask? { state[\.failedTask] }

    /// Why the chain failed; `nil` while running and after a success.
    public var error: ErrandError? { state[\.error] }

    /// Whether ``cancel()`` was called, on this chain or on a group it is a step of.
    public var isCancelled: Bool { state[\.isCancelled] }

    /// Whether the chain has ended.
    public var isFinished: Bool { state[\.isFinished] }

    // MARK: Running

    /// Adds a request after the last step; `callback` (default none) runs when it succeeded.
    /// A chain that has ended ignores it.
    public func add(_ request: any BaseRequest, callback: (@Sendable (ChainTask, RequestTask) -> Void)? = nil) {
        add(ChainRequest.link(request, callback: callback))
    }

    /// Adds a batch after the last step; `callback` runs when all of it succeeded.
    public func add(_ batch: BatchRequest, callback: (@Sendable (ChainTask, BatchTask) -> Void)? = nil) {
        add(ChainRequest.link(batch, callback: callback))
    }

    /// Adds a chain after the last step; `callback` runs when all of it succeeded.
    public func add(_ chain: ChainRequest, callback: (@Sendable (ChainTask, ChainTask) -> Void)? = nil) {
        add(ChainRequest.link(chain, callback: callback))
    }

    private func add(_ link: ChainRequest.Link) {
        state.withLock { $0.links.append(link) }
    }

    /// Cancels the step running now and every later one; the chain then fails once, with
    /// ``ErrandError/cancelled``.
    public func cancel() {
        let (current, finishNow) = state.withLock { state -> (ComposedStepTask?, Bool) in
            guard !state.isFinished, !state.isCancelled else { return (nil, false) }
            state.isCancelled = true
            guard let current = state.current else {
                // Between steps: nothing runs that would end the chain.
                state.error = .cancelled
                return (nil, true)
            }
            return (current, false)
        }
        current?.cancel()
        if finishNow { finish() }
    }

    func run() {
        agent.groups.register(self)
        accessories.forEach { $0.requestGroupWillStart(self) }
        startNext()
    }

    /// Starts the next step, or ends the chain when there is none or it was cancelled.
    private func startNext() {
        let next = state.withLock { state -> ChainRequest.Link? in
            guard !state.isFinished, !state.isCancelled, state.steps.count < state.links.count else { return nil }
            return state.links[state.steps.count]
        }
        guard let next else {
            // Cancelled between steps finished already, in `cancel()`.
            if !isCancelled { finish() }
            return
        }
        let started = next.step.start(on: agent) { [self] finished in stepFinished(finished, next) }
        let cancelNow = state.withLock { state in
            if state.current == nil && state.steps.count < state.links.count { state.current = started }
            return state.isCancelled
        }
        if cancelNow { started.cancel() }
    }

    private func stepFinished(_ step: ComposedStepTask, _ link: ChainRequest.Link) {
        let failed = state.withLock { state -> Bool in
            state.steps.append(step)
            state.current = nil
            guard let error = step.error else { return false }
            state.failedTask = step.failedTask
            state.error = state.isCancelled ? .cancelled : error
            return true
        }
        if failed { return finish() }
        agent.config.callbackQueue.async { [self] in
            link.callback?(self, step)
            startNext()
        }
    }

    private func finish() {
        let first = state.withLock { state -> Bool in
            defer { state.isFinished = true }
            return !state.isFinished
        }
        guard first else { return }
        agent.groups.unregister(self)
        completion.deliver(
            self, succeeded: error == nil, accessories: accessories, callbackQueue: agent.config.callbackQueue)
    }
}
