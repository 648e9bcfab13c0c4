/// A request made of requests: ``BatchRequest`` and ``ChainRequest`` conform.
///
/// A group can be a member of another group — a batch a step of a chain, a chain a member of a
/// batch — and the agent that runs its children tracks it, so
/// ``NetworkAgent/cancelAllRequests()`` ends it too. A type of your own may conform, but most
/// code only passes Errand's groups around.
public protocol RequestGroup: Sendable {
    /// Starts the group as a member of another: `finished` runs exactly once, with the returned
    /// task, on the thread that ended it — possibly before this method returns — and must only
    /// record the outcome; the enclosing group moves its callbacks to a callback queue.
    func startAsMember(finished: @escaping @Sendable (any RequestGroupTask) -> Void) -> any RequestGroupTask
}

/// One execution of a ``RequestGroup``: ``BatchTask`` or ``ChainTask``.
public protocol RequestGroupTask: AnyObject, Sendable {
    /// The tasks of the requests started so far, in member order; a nested group's tasks appear
    /// in its place, in its own order.
    var tasks: [RequestTask] { get }
    /// The request task whose failure ended the group; `nil` while it runs, after success, and
    /// when the group was cancelled before that child failed.
    var failedTask: RequestTask? { get }
    /// Why the group failed; `nil` while it runs and after success.
    var error: ErrandError? { get }
    /// Whether ``cancel()`` was called before the group finished.
    var isCancelled: Bool { get }
    /// Stops the group and everything under it, including members not yet started; the group
    /// then fails with ``ErrandError/cancelled`` once every started child has reported.
    func cancel()
}

extension RequestGroupTask {
    /// The responses of ``tasks`` after success, else the error.
    var outcome: Result<[Response], ErrandError> {
        if let error { return .failure(error) }
        return .success(tasks.compactMap(\.response))
    }
}
