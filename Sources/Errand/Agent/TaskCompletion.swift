import Dispatch

/// How a task reports its outcome: by closures on the callback queue, to a delegate or by
/// main-actor closures on the main queue, or by resuming an `async` caller.
enum TaskCompletion: Sendable {
    case closures(success: (@Sendable (RequestTask) -> Void)?, failure: (@Sendable (RequestTask) -> Void)?)
    case delegate(WeakDelegate)
    case mainActor(success: (@MainActor (RequestTask) -> Void)?, failure: (@MainActor (RequestTask) -> Void)?)
    case continuation(@Sendable (Result<Response, ErrandError>) -> Void)
    /// An `async` caller that runs the task's response work itself (``AwaitingCaller``).
    case awaiting(AwaitingCaller)

    /// A delegate held weakly, so that a finished screen is not kept alive by its requests.
    struct WeakDelegate: Sendable {
        weak var delegate: (any RequestDelegate)?
    }

    /// Where the callback runs; `nil` for an `async` caller, resumed inline or running it itself.
    func queue(callbackQueue: DispatchQueue) -> DispatchQueue? {
        switch self {
        case .closures: callbackQueue
        case .delegate, .mainActor: .main
        case .continuation, .awaiting: nil
        }
    }

    /// Whether the callback waits for the main queue.
    func runsOnMain(callbackQueue: DispatchQueue) -> Bool {
        switch self {
        // By label: on Linux each `DispatchQueue.main` is a new object for the same queue.
        case .closures: callbackQueue.label == DispatchQueue.main.label
        case .delegate, .mainActor: true
        case .continuation, .awaiting: false
        }
    }

    /// Calls back with `outcome`, on the queue ``queue(callbackQueue:)`` names.
    func call(_ task: RequestTask, with outcome: Result<Response, ErrandError>) {
        let succeeded = if case .success = outcome { true } else { false }
        switch self {
        case .closures(let success, let failure):
            if succeeded { success?(task) } else { failure?(task) }
        case .delegate(let box):
            MainActor.assumeIsolated {
                if succeeded { box.delegate?.requestFinished(task) } else { box.delegate?.requestFailed(task) }
            }
        case .mainActor(let success, let failure):
            MainActor.assumeIsolated {
                if succeeded { success?(task) } else { failure?(task) }
            }
        case .continuation(let resume):
            resume(outcome)
        case .awaiting(let caller):
            caller.post(.finish(outcome))
        }
    }
}
