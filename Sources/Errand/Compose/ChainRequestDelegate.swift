/// An object told when a chain started with ``ChainRequest/start(delegate:)`` finishes.
///
/// Held weakly and released when the chain finishes; called on the main queue. Neither method has
/// a default, so a delegate ported with another name — YTKNetwork's
/// `chainRequestFailed(_:failedBaseRequest:)`, say — fails to compile instead of never being called.
@MainActor
public protocol ChainRequestDelegate: AnyObject, Sendable {
    /// Every step succeeded.
    func chainRequestFinished(_ task: ChainTask)
    /// A step failed or the chain was cancelled; `task.failedTask` and `task.error` say which
    /// and why.
    func chainRequestFailed(_ task: ChainTask)
}
