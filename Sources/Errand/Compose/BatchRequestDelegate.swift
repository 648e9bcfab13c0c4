/// An object told when a batch started with ``BatchRequest/start(delegate:)`` finishes.
///
/// Held weakly and released when the batch finishes; called on the main queue. Neither method has
/// a default, so a delegate whose method is misspelled fails to compile instead of never being called.
@MainActor
public protocol BatchRequestDelegate: AnyObject, Sendable {
    /// Every member succeeded.
    func batchRequestFinished(_ task: BatchTask)
    /// A member failed or the batch was cancelled; `task.failedTask` and `task.error` say which
    /// and why.
    func batchRequestFailed(_ task: BatchTask)
}
