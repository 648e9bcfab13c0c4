/// Requests that run one after another, as YTKNetwork's `YTKChainRequest`: each step's callback
/// may add the next step, built from the finished step's response.
///
/// The first failing step ends the chain: it fails once with ``ChainTask/failedTask`` set and
/// the steps after it never start. Step callbacks run on ``NetworkConfig/callbackQueue`` (the
/// main queue for a delegate-started chain) and only after success.
///
/// ```swift
/// var chain = ChainRequest()
/// chain.add(LoginApi()) { chain, login in
///     chain.add(ProfileApi(token: login.response?.object["token"] as? String ?? ""))
/// }
/// let responses = try await chain.responses()
/// ```
public struct ChainRequest: RequestGroup {
    var steps: [ChainStep] = []
    /// The agent that runs the steps. Default ``NetworkAgent/shared``.
    public let agent: NetworkAgent
    /// Observers of each run of this chain. Default none.
    public var accessories: [any RequestGroupAccessory] = []

    /// An empty chain; add steps with ``add(_:callback:)-(BaseRequest,_)`` before or while it runs.
    /// - Parameter agent: The agent that runs the steps. Default ``NetworkAgent/shared``.
    public init(agent: NetworkAgent = .shared) {
        self.agent = agent
    }

    /// Adds `request` as the last step; `callback` (default none) gets the chain's task and the
    /// step's task when the step succeeds, and may add the next step.
    public mutating func add(
        _ request: any BaseRequest, callback: (@Sendable (ChainTask, RequestTask) -> Void)? = nil
    ) {
        steps.append(ChainStep(member: .request(request), callback: callback.map { .request($0) }))
    }

    /// Adds `group`, a batch or another chain, as the last step; `callback` (default none) gets
    /// the group's task when it succeeds.
    public mutating func add(
        _ group: any RequestGroup, callback: (@Sendable (ChainTask, any RequestGroupTask) -> Void)? = nil
    ) {
        steps.append(ChainStep(member: .group(group), callback: callback.map { .group($0) }))
    }

    /// Starts the chain; one of the closures runs once on ``NetworkConfig/callbackQueue`` when it ends.
    @discardableResult
    public func start(
        success: (@Sendable (ChainTask) -> Void)? = nil, failure: (@Sendable (ChainTask) -> Void)? = nil
    ) -> ChainTask {
        run(.closures(success: success, failure: failure))
    }

    /// Starts the chain; `delegate`, held weakly and released when the chain ends, is told on the main queue.
    @discardableResult
    public func start(delegate: any ChainRequestDelegate) -> ChainTask {
        run(
            .delegate { [weak delegate] task, succeeded in
                if succeeded { delegate?.chainRequestFinished(task) } else { delegate?.chainRequestFailed(task) }
            })
    }

    /// Every step's response, in the order the steps ran.
    ///
    /// Cancelling the calling Swift task cancels the chain, which then throws ``ErrandError/cancelled``.
    /// - Throws: The failed step's error (``ChainTask/error``).
    public func responses() async throws(ErrandError) -> [Response] {
        let box = Locked<ChainTask?>(nil)
        let task = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = ChainTask(self, completion: .inline { continuation.resume(returning: $0) })
                box.withLock { $0 = task }
                task.start()
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            box.withLock { $0 }?.cancel()
        }
        return try task.outcome.get()
    }

    /// Starts the chain inside another group; see ``RequestGroup/startAsMember(finished:)``.
    public func startAsMember(finished: @escaping @Sendable (any RequestGroupTask) -> Void) -> any RequestGroupTask {
        run(.inline(finished))
    }

    private func run(_ completion: GroupCompletion<ChainTask>) -> ChainTask {
        let task = ChainTask(self, completion: completion)
        task.start()
        return task
    }
}
