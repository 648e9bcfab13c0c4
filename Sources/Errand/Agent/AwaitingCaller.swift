/// Where an `async` caller waits for its request, and the thread that judges its response.
///
/// The work that follows a transport's completion — validation, interceptors, accessories, the
/// outcome — is posted here and runs on the caller's own task when it resumes, instead of on a
/// delivery thread that would then have to wake the caller: one hand-off per request fewer.
final class AwaitingCaller: Sendable {
    /// What the caller does next.
    enum Step: Sendable {
        /// Work the caller runs before it looks at the next step.
        case run(@Sendable () -> Void)
        /// The request's outcome; the caller returns it.
        case finish(Result<Response, ErrandError>)
    }

    private struct State {
        var steps: [Step] = []
        var waiter: CheckedContinuation<Step, Never>?
    }

    private let state = Locked(State())

    /// Queues `step`, resuming the caller if it waits.
    func post(_ step: Step) {
        let waiter = state.withLock { state -> CheckedContinuation<Step, Never>? in
            guard let waiter = state.waiter else {
                state.steps.append(step)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: step)
    }

    /// Runs the posted work as it comes, until the outcome arrives.
    func outcome() async -> Result<Response, ErrandError> {
        while true {
            switch await next() {
            case .run(let work): work()
            case .finish(let outcome): return outcome
            }
        }
    }

    /// The next step, waiting only when none is queued.
    private func next() async -> Step {
        if let step = state.withLock({ $0.steps.isEmpty ? nil : $0.steps.removeFirst() }) {
            return step
        }
        // Checked, not unsafe: the unsafe one's resume is invisible to the thread sanitizer,
        // which then reports the awaiting task's next access as a race.
        return await withCheckedContinuation { continuation in
            let step = state.withLock { state -> Step? in
                guard !state.steps.isEmpty else {
                    state.waiter = continuation
                    return nil
                }
                return state.steps.removeFirst()
            }
            if let step { continuation.resume(returning: step) }
        }
    }
}
