/// One step of a ``BatchRequest`` or a ``ChainRequest``: a request, or a group nested in it.
enum ComposedStep: Sendable {
    case request(any BaseRequest)
    case batch(BatchRequest)
    case chain(ChainRequest)

    /// Starts the step on `agent`. `finished` is told once, on the thread that finished it —
    /// possibly before this returns, when a cache answers.
    func start(on agent: NetworkAgent, finished: @escaping @Sendable (ComposedStepTask) -> Void)
        -> ComposedStepTask
    {
        switch self {
        case .request(let request):
            let task = agent.pipeline.makeTask(request, completion: .inline { finished(.request($0)) })
            agent.pipeline.start(task, readsCache: true)
            return .request(task)
        case .batch(let batch):
            return .batch(batch.run(on: agent, completion: .inline { finished(.batch($0)) }))
        case .chain(let chain):
            return .chain(chain.run(on: agent, completion: .inline { finished(.chain($0)) }))
        }
    }
}

/// A started step: the task of its request or group.
enum ComposedStepTask: Sendable {
    case request(RequestTask)
    case batch(BatchTask)
    case chain(ChainTask)

    func cancel() {
        switch self {
        case .request(let task): task.cancel()
        case .batch(let task): task.cancel()
        case .chain(let task): task.cancel()
        }
    }

    /// The request tasks under the step, in step order.
    var tasks: [RequestTask] {
        switch self {
        case .request(let task): [task]
        case .batch(let task): task.tasks
        case .chain(let task): task.tasks
        }
    }

    /// The request that failed the step; `nil` when it succeeded.
    var failedTask: RequestTask? {
        switch self {
        case .request(let task): task.error == nil ? nil : task
        case .batch(let task): task.failedTask
        case .chain(let task): task.failedTask
        }
    }

    /// Why the step failed; `nil` when it succeeded.
    var error: ErrandError? {
        switch self {
        case .request(let task): task.error
        case .batch(let task): task.error
        case .chain(let task): task.error
        }
    }
}
