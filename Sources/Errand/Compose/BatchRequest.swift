/// Requests — and nested batches and chains — run at the same time, with one callback for all.
///
/// By default a batch is all-or-nothing, as in YTKNetwork: the first step that fails cancels the
/// others, which end with ``ErrandError/cancelled``, and the failure callback runs once, with
/// ``BatchTask/failedTask`` set. With `runsToEnd`, every step runs to its end and the batch
/// succeeds only if all of them did; each child's outcome is on ``BatchTask/tasks``.
///
///     let batch = BatchRequest(requests: [ProfileRequest(), FeedRequest(), BadgesRequest()])
///     let responses = try await batch.responses()  // in request order
///
/// Each request runs through the agent as if started alone: cache, interceptors, retries and
/// token refreshes apply to it.
public struct BatchRequest: Sendable {
    /// The steps, in order.
    let steps: [ComposedStep]
    /// Whether every step runs to its end even after one failed. Default `false`.
    public var runsToEnd: Bool
    /// Observers told when the batch starts and stops. Default none.
    public var accessories: [any RequestAccessory] = []
    /// Called on ``NetworkConfig/callbackQueue`` each time a step finishes, in order. Default `nil`.
    /// ``BatchTask/progressUpdates`` is the `async` form.
    public var progress: (@Sendable (BatchProgress) -> Void)?

    /// A batch of `requests`.
    public init(requests: [any BaseRequest], runsToEnd: Bool = false) {
        steps = requests.map(ComposedStep.request)
        self.runsToEnd = runsToEnd
    }

    /// A batch of requests, or of steps that are batches or chains themselves.
    public init(steps: [BatchStep], runsToEnd: Bool = false) {
        self.steps = steps.map(\.step)
        self.runsToEnd = runsToEnd
    }

    /// Starts the batch on `agent` (default ``NetworkAgent/shared``); one of the closures runs on
    /// ``NetworkConfig/callbackQueue`` when every step has ended.
    @discardableResult
    public func start(
        on agent: NetworkAgent = .shared, success: (@Sendable (BatchTask) -> Void)? = nil,
        failure: (@Sendable (BatchTask) -> Void)? = nil
    ) -> BatchTask {
        run(on: agent, completion: .closures(success: success, failure: failure))
    }

    /// Starts the batch on `agent`; `delegate`, held weakly, is told on the main queue when it ends.
    @discardableResult
    public func start(on agent: NetworkAgent = .shared, delegate: any BatchRequestDelegate) -> BatchTask {
        run(
            on: agent,
            completion: .mainActor { [weak delegate] task, succeeded in
                if succeeded { delegate?.batchRequestFinished(task) } else { delegate?.batchRequestFailed(task) }
            })
    }

    /// Runs the batch and returns every request's response, in step order, nested groups'
    /// flattened in theirs. Cancelling the calling Swift task cancels the batch.
    /// - Throws: The error of the request that failed the batch, or ``ErrandError/cancelled``.
    public func responses(on agent: NetworkAgent = .shared) async throws(ErrandError) -> [Response] {
        try await GroupAwaiter.responses { finished in run(on: agent, completion: .inline(finished)) }
    }

    func run(on agent: NetworkAgent, completion: GroupCompletion<BatchTask>) -> BatchTask {
        let task = BatchTask(batch: self, agent: agent, completion: completion)
        task.run()
        return task
    }
}
