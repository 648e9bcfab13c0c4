import Dispatch

/// How a group reports its outcome: closures on the callback queue, a delegate on the main
/// queue, or inline to an `async` caller or an enclosing group.
enum GroupCompletion<Task: RequestGroupTask>: Sendable {
    case closures(success: (@Sendable (Task) -> Void)?, failure: (@Sendable (Task) -> Void)?)
    /// Calls the weakly held delegate: `true` for success.
    case delegate(@MainActor @Sendable (Task, Bool) -> Void)
    case inline(@Sendable (Task) -> Void)

    /// Where the group's callbacks, a chain's step callbacks included, run.
    func queue(callbackQueue: DispatchQueue) -> DispatchQueue? {
        switch self {
        case .closures: callbackQueue
        case .delegate: .main
        case .inline: nil
        }
    }

    /// Where user work of the group runs: an inline group borrows no thread for it.
    func workQueue(callbackQueue: DispatchQueue) -> DispatchQueue {
        queue(callbackQueue: callbackQueue) ?? callbackQueue
    }

    /// Runs the accessories and the callback on ``queue(callbackQueue:)``.
    func deliver(_ task: Task, accessories: [any RequestGroupAccessory], callbackQueue: DispatchQueue) {
        let succeeded = task.error == nil
        let run: @Sendable () -> Void = {
            accessories.forEach { $0.requestGroupWillStop(task) }
            switch self {
            case .closures(let success, let failure):
                if succeeded { success?(task) } else { failure?(task) }
            case .delegate(let call):
                MainActor.assumeIsolated { call(task, succeeded) }
            case .inline(let call):
                call(task)
            }
            accessories.forEach { $0.requestGroupDidStop(task) }
        }
        guard let queue = queue(callbackQueue: callbackQueue) else { return run() }
        queue.async(execute: run)
    }
}
