/// An object told when a chain started with ``ChainRequest/start(delegate:)`` finishes.
///
/// Held weakly and released when the chain finishes; called on the main queue. Both methods
/// have defaults, so a delegate implements only what it needs and the chain still ends.
@MainActor
public protocol ChainRequestDelegate: AnyObject, Sendable {
    /// Every step succeeded. Default: does nothing.
    func chainRequestFinished(_ task: ChainTask)
    /// A step failed or the chain was cancelled; `task.failedTask` and `task.error` say which
    /// and why. Default: does nothing.
    func chainRequestFailed(_ task: ChainTask)
}

extension ChainRequestDelegate {
    /// Default: does nothing.
    public func chainRequestFinished(_ task: ChainTask) {}
    /// Default: does nothing.
    public func chainRequestFailed(_ task: ChainTask) {}
}
