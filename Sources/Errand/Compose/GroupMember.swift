/// One member of a batch or one step of a chain, before it starts.
enum GroupMember: Sendable {
    case request(any BaseRequest)
    case group(any RequestGroup)
}

/// A member once it has a task.
enum MemberRun: Sendable {
    case request(RequestTask)
    case group(any RequestGroupTask)

    /// Creates the task of `member` without starting a request, or starts a group, which has no
    /// separate creation step. `finished` runs once, inline, when the member ends.
    static func make(
        _ member: GroupMember, agent: NetworkAgent, finished: @escaping @Sendable (MemberRun) -> Void
    ) -> MemberRun {
        switch member {
        case .request(let request):
            let box = Locked<RequestTask?>(nil)
            let task = agent.pipeline.makeTask(
                request,
                completion: .continuation { _ in
                    if let task = box.withLock({ $0 }) { finished(.request(task)) }
                })
            box.withLock { $0 = task }
            return .request(task)
        case .group(let group):
            return .group(group.startAsMember { finished(.group($0)) })
        }
    }

    /// Starts a request's task; a group started when it was made.
    func start(agent: NetworkAgent) {
        if case .request(let task) = self { agent.pipeline.start(task, readsCache: true) }
    }

    var tasks: [RequestTask] {
        switch self {
        case .request(let task): [task]
        case .group(let group): group.tasks
        }
    }

    var error: ErrandError? {
        switch self {
        case .request(let task): task.error
        case .group(let group): group.error
        }
    }

    var failedTask: RequestTask? {
        switch self {
        case .request(let task): task.error == nil ? nil : task
        case .group(let group): group.failedTask
        }
    }

    func cancel() {
        switch self {
        case .request(let task): task.cancel()
        case .group(let group): group.cancel()
        }
    }
}
