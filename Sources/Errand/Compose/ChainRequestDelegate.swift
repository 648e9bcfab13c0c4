/// An object told when a chain started with ``ChainRequest/start(on:delegate:)`` ends.
///
/// Held weakly, and called on the main queue, as ``RequestDelegate`` is. Every method has a
/// default that does nothing: a chain never waits on its delegate, whatever it implements.
@MainActor
public protocol ChainRequestDelegate: AnyObject, Sendable {
    /// Every step succeeded. Default: does nothing.
    func chainRequestFinished(_ chain: ChainTask)
    /// A step failed, or the chain was cancelled; ``ChainTask/failedTask`` says which. Default: does nothing.
    func chainRequestFailed(_ chain: ChainTask)
}

extension ChainRequestDelegate {
    /// Default: does nothing.
    public func chainRequestFinished(_ chain: ChainTask) {}
    /// Default: does nothing.
    public func chainRequestFailed(_ chain: ChainTask) {}
}
