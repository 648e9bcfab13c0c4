/// Requests — and nested batches and chains — run one after another; each step's callback can
/// add the next step, built from the response it got.
///
///     let chain = ChainRequest()
///     chain.add(LoginRequest(user: name, password: password)) { chain, login in
///         let token = (login.responseJSONObject as? [String: Any])?["token"] as? String ?? ""
///         chain.add(ProfileRequest(token: token))
///     }
///     chain.start(success: { chain in show(chain.tasks.last?.responseJSONObject) },
///                 failure: { chain in show(chain.error) })
///
/// The first step that fails ends the chain: its failure callback runs once, with
/// ``ChainTask/failedTask`` set, and no later step starts. Step callbacks run on
/// ``NetworkConfig/callbackQueue``, before the next step starts. Each request runs through the
/// agent as if started alone: cache, interceptors, retries and token refreshes apply to it.
///
/// A chain is a list of steps that grows: ``add(_:callback:)`` before it starts, or on the
/// ``ChainTask`` while it runs. Each start runs the steps added so far, and its task's own.
public final class ChainRequest: Sendable {
    /// A step and what to do when it succeeded.
    struct Link: Sendable {
        let step: ComposedStep
        let callback: (@Sendable (ChainTask, ComposedStepTask) -> Void)?
    }

    private let state = Locked(State())

    private struct State {
        var links: [Link] = []
        var accessories: [any RequestAccessory] = []
    }

    /// An empty chain.
    public init() {}

    /// Observers told when the chain starts and stops. Default none.
    public var accessories: [any RequestAccessory] {
        get { state[\.accessories] }
        set { state[\.accessories] = newValue }
    }

    var links: [Link] { state[\.links] }

    /// Adds a request; `callback` (default none) runs when it succeeded, and may add the next step.
    public func add(_ request: any BaseRequest, callback: (@Sendable (ChainTask, RequestTask) -> Void)? = nil) {
        add(Self.link(request, callback: callback))
    }

    /// Adds a batch as one step; `callback` runs when all of it succeeded.
    public func add(_ batch: BatchRequest, callback: (@Sendable (ChainTask, BatchTask) -> Void)? = nil) {
        add(Self.link(batch, callback: callback))
    }

    /// Adds a chain as one step: its steps run in turn; `callback` runs when all of them succeeded.
    public func add(_ chain: ChainRequest, callback: (@Sendable (ChainTask, ChainTask) -> Void)? = nil) {
        add(Self.link(chain, callback: callback))
    }

    private func add(_ link: Link) {
        state.withLock { $0.links.append(link) }
    }

    /// Starts the chain on `agent` (default ``NetworkAgent/shared``); one of the closures runs on
    /// ``NetworkConfig/callbackQueue`` when the last step has ended or one has failed.
    @discardableResult
    public func start(
        on agent: NetworkAgent = .shared, success: (@Sendable (ChainTask) -> Void)? = nil,
        failure: (@Sendable (ChainTask) -> Void)? = nil
    ) -> ChainTask {
        run(on: agent, completion: .closures(success: success, failure: failure))
    }

    /// Starts the chain on `agent`; `delegate`, held weakly, is told on the main queue when it ends.
    @discardableResult
    public func start(on agent: NetworkAgent = .shared, delegate: any ChainRequestDelegate) -> ChainTask {
        run(
            on: agent,
            completion: .mainActor { [weak delegate] task, succeeded in
                if succeeded { delegate?.chainRequestFinished(task) } else { delegate?.chainRequestFailed(task) }
            })
    }

    /// Runs the chain and returns every request's response, in the order they ran. Cancelling
    /// the calling Swift task cancels the chain.
    /// - Throws: The error of the request that failed the chain, or ``ErrandError/cancelled``.
    public func responses(on agent: NetworkAgent = .shared) async throws(ErrandError) -> [Response] {
        try await GroupAwaiter.responses { finished in run(on: agent, completion: .inline(finished)) }
    }

    func run(on agent: NetworkAgent, completion: GroupCompletion<ChainTask>) -> ChainTask {
        let task = ChainTask(links: links, accessories: accessories, agent: agent, completion: completion)
        task.run()
        return task
    }

    // MARK: Links

    static func link(_ request: any BaseRequest, callback: (@Sendable (ChainTask, RequestTask) -> Void)?) -> Link {
        guard let callback else { return Link(step: .request(request), callback: nil) }
        let unwrapping: @Sendable (ChainTask, ComposedStepTask) -> Void = { chain, step in
            if case .request(let task) = step { callback(chain, task) }
        }
        return Link(step: .request(request), callback: unwrapping)
    }

    static func link(_ batch: BatchRequest, callback: (@Sendable (ChainTask, BatchTask) -> Void)?) -> Link {
        guard let callback else { return Link(step: .batch(batch), callback: nil) }
        let unwrapping: @Sendable (ChainTask, ComposedStepTask) -> Void = { chain, step in
            if case .batch(let task) = step { callback(chain, task) }
        }
        return Link(step: .batch(batch), callback: unwrapping)
    }

    static func link(_ chain: ChainRequest, callback: (@Sendable (ChainTask, ChainTask) -> Void)?) -> Link {
        guard let callback else { return Link(step: .chain(chain), callback: nil) }
        let unwrapping: @Sendable (ChainTask, ComposedStepTask) -> Void = { outer, step in
            if case .chain(let task) = step { callback(outer, task) }
        }
        return Link(step: .chain(chain), callback: unwrapping)
    }
}
