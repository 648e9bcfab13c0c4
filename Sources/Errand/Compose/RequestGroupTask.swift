/// What a running ``BatchTask`` and ``ChainTask`` have in common, for code that handles either,
/// such as a ``RequestAccessory``.
public protocol RequestGroupTask: AnyObject, Sendable {
    /// The tasks of every request run so far, nested groups' included, in step order.
    var tasks: [RequestTask] { get }
    /// The request whose failure ended the group; `nil` while running and after a success.
    var failedTask: RequestTask? { get }
    /// Why the group failed: ``failedTask``'s error, or ``ErrandError/cancelled``; `nil` while
    /// running and after a success.
    var error: ErrandError? { get }
    /// Whether ``cancel()`` was called, on this group or on one it is a step of.
    var isCancelled: Bool { get }
    /// Cancels every request under the group, nested groups' included, and every step not yet
    /// started; the group then fails once, with ``ErrandError/cancelled``.
    func cancel()
}
