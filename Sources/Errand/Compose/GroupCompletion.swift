import Dispatch

/// How a batch or chain reports its end: closures on the callback queue, a main-actor delegate
/// call, or inline to the group it is a step of or to an `async` caller.
enum GroupCompletion<Task: RequestGroupTask>: Sendable {
    case closures(success: (@Sendable (Task) -> Void)?, failure: (@Sendable (Task) -> Void)?)
    case mainActor(@MainActor @Sendable (Task, _ succeeded: Bool) -> Void)
    case inline(@Sendable (Task) -> Void)

    /// Runs the accessories and the callback for `task`, on the queue the completion names.
    func deliver(_ task: Task, succeeded: Bool, accessories: [any RequestAccessory], callbackQueue: DispatchQueue) {
        let stopping: @Sendable () -> Void = { accessories.forEach { $0.requestGroupWillStop(task) } }
        let stopped: @Sendable () -> Void = { accessories.forEach { $0.requestGroupDidStop(task) } }
        switch self {
        case .closures(let success, let failure):
            callbackQueue.async {
                stopping()
                if succeeded { success?(task) } else { failure?(task) }
                stopped()
            }
        case .mainActor(let call):
            DispatchQueue.main.async {
                stopping()
                MainActor.assumeIsolated { call(task, succeeded) }
                stopped()
            }
        case .inline(let finished):
            stopping()
            finished(task)
            stopped()
        }
    }
}
