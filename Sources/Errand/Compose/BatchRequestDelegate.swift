/// An object told when a batch started with ``BatchRequest/start(delegate:)`` finishes.
///
/// Held weakly and released when the batch finishes; called on the main queue. Both methods
/// have defaults, so a delegate implements only what it needs and the batch still ends.
@MainActor
public protocol BatchRequestDelegate: AnyObject, Sendable {
    /// Every member succeeded. Default: does nothing.
    func batchRequestFinished(_ task: BatchTask)
    /// A member failed or the batch was cancelled; `task.failedTask` and `task.error` say which
    /// and why. Default: does nothing.
    func batchRequestFailed(_ task: BatchTask)
}

extension BatchRequestDelegate {
    /// Default: does nothing.
    public func batchRequestFinished(_ task: BatchTask) {}
    /// Default: does nothing.
    public func batchRequestFailed(_ task: BatchTask) {}
}
