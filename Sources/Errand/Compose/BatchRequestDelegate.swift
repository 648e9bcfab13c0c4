/// An object told when a batch started with ``BatchRequest/start(on:delegate:)`` ends.
///
/// Held weakly, and called on the main queue, as ``RequestDelegate`` is. Every method has a
/// default that does nothing, so a delegate implements only what it needs.
@MainActor
public protocol BatchRequestDelegate: AnyObject, Sendable {
    /// Every step succeeded. Default: does nothing.
    func batchRequestFinished(_ batch: BatchTask)
    /// A step failed, or the batch was cancelled; ``BatchTask/failedTask`` says which. Default: does nothing.
    func batchRequestFailed(_ batch: BatchTask)
}

extension BatchRequestDelegate {
    /// Default: does nothing.
    public func batchRequestFinished(_ batch: BatchTask) {}
    /// Default: does nothing.
    public func batchRequestFailed(_ batch: BatchTask) {}
}
