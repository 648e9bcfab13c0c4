/// Requests that run at once and report together, as YTKNetwork's `YTKBatchRequest`.
///
/// By default it is all-or-nothing: the first member to fail cancels the rest, which report
/// ``ErrandError/cancelled``, and the batch fails once with ``BatchTask/failedTask`` set. With
/// `runsToEnd`, every member runs to its end: the batch succeeds only when all did, else it
/// fails with the first failure as ``BatchTask/failedTask``, and every member's own result is on
/// its task in ``BatchTask/tasks`` (or, `async`, from ``results()``).
///
/// ```swift
/// let batch = BatchRequest(requests: [UserApi(id: 1), UserApi(id: 2)])
/// let responses = try await batch.responses()
/// ```
public struct BatchRequest: RequestGroup {
    var members: [GroupMember]
    /// Whether every member runs to its end even after one failed. Default `false`.
    public let runsToEnd: Bool
    /// The agent that runs the members. Default ``NetworkAgent/shared``.
    public let agent: NetworkAgent
    /// Observers of each run of this batch. Default none.
    public var accessories: [any RequestGroupAccessory] = []

    /// A batch of requests.
    /// - Parameters:
    ///   - requests: The members, in the order of ``BatchTask/tasks`` and ``responses()``.
    ///   - runsToEnd: Whether a failure leaves the others running. Default `false`.
    ///   - agent: The agent that runs them. Default ``NetworkAgent/shared``.
    public init(requests: [any BaseRequest], runsToEnd: Bool = false, agent: NetworkAgent = .shared) {
        self.init(members: requests.map(GroupMember.request), runsToEnd: runsToEnd, agent: agent)
    }

    /// A batch whose members include other groups, such as chains; each runs as one member.
    /// - Parameters:
    ///   - groups: The members, in order; a group's tasks take its place in ``BatchTask/tasks``.
    ///   - runsToEnd: Whether a failure leaves the others running. Default `false`.
    ///   - agent: The agent that runs the requests. Default ``NetworkAgent/shared``; a nested
    ///     group runs on its own agent.
    public init(groups: [any RequestGroup], runsToEnd: Bool = false, agent: NetworkAgent = .shared) {
        self.init(members: groups.map(GroupMember.group), runsToEnd: runsToEnd, agent: agent)
    }

    private init(members: [GroupMember], runsToEnd: Bool, agent: NetworkAgent) {
        self.members = members
        self.runsToEnd = runsToEnd
        self.agent = agent
    }

    /// Adds `request` as the last member.
    public mutating func add(_ request: any BaseRequest) {
        members.append(.request(request))
    }

    /// Adds `group`, a chain or another batch, as the last member.
    public mutating func add(_ group: any RequestGroup) {
        members.append(.group(group))
    }

    /// Starts the batch; one of the closures runs once on ``NetworkConfig/callbackQueue`` when
    /// every member has reported. `progress` (default none) runs there after each member finishes.
    @discardableResult
    public func start(
        progress: (@Sendable (BatchProgress) -> Void)? = nil, success: (@Sendable (BatchTask) -> Void)? = nil,
        failure: (@Sendable (BatchTask) -> Void)? = nil
    ) -> BatchTask {
        run(.closures(success: success, failure: failure), progress: progress)
    }

    /// Starts the batch; `delegate`, held weakly and released when the batch ends, is told on the main queue.
    @discardableResult
    public func start(delegate: any BatchRequestDelegate) -> BatchTask {
        run(
            .delegate { [weak delegate] task, succeeded in
                if succeeded { delegate?.batchRequestFinished(task) } else { delegate?.batchRequestFailed(task) }
            }, progress: nil)
    }

    /// The members' responses in request order.
    ///
    /// Cancelling the calling Swift task cancels the batch, which then throws ``ErrandError/cancelled``.
    /// - Throws: The first failure's error (``BatchTask/error``).
    public func responses() async throws(ErrandError) -> [Response] {
        try await finishedTask().outcome.get()
    }

    /// Every member's own result in request order, for a batch that `runsToEnd`: a failure does
    /// not hide the others. A member that is a group gives one result per task it ran.
    public func results() async -> [Result<Response, ErrandError>] {
        await finishedTask().tasks.map { task in
            if let error = task.error { return .failure(error) }
            return task.response.map { .success($0) } ?? .failure(.cancelled)
        }
    }

    /// Starts the batch inside another group; see ``RequestGroup/startAsMember(finished:)``.
    public func startAsMember(finished: @escaping @Sendable (any RequestGroupTask) -> Void) -> any RequestGroupTask {
        run(.inline(finished), progress: nil)
    }

    private func finishedTask() async -> BatchTask {
        let box = Locked<BatchTask?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = BatchTask(self, completion: .inline { continuation.resume(returning: $0) }, progress: nil)
                box.withLock { $0 = task }
                task.start()
                if Task.isCancelled { task.cancel() }
            }
        } onCancel: {
            box.withLock { $0 }?.cancel()
        }
    }

    private func run(_ completion: GroupCompletion<BatchTask>, progress: (@Sendable (BatchProgress) -> Void)?)
        -> BatchTask
    {
        let task = BatchTask(self, completion: completion, progress: progress)
        task.start()
        return task
    }
}
