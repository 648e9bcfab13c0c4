/// An observer of a batch's or a chain's lifecycle, as ``RequestAccessory`` is of a request's.
///
/// `requestGroupWillStart` is called on the thread that starts the group; the other two just
/// before and after its success or failure callback, on the queue that callback runs on.
public protocol RequestGroupAccessory: Sendable {
    /// The group is about to start. Default: does nothing.
    func requestGroupWillStart(_ task: any RequestGroupTask)
    /// The group finished; its callbacks are about to run. Default: does nothing.
    func requestGroupWillStop(_ task: any RequestGroupTask)
    /// The group's callbacks have run. Default: does nothing.
    func requestGroupDidStop(_ task: any RequestGroupTask)
}

extension RequestGroupAccessory {
    /// Default: does nothing.
    public func requestGroupWillStart(_ task: any RequestGroupTask) {}
    /// Default: does nothing.
    public func requestGroupWillStop(_ task: any RequestGroupTask) {}
    /// Default: does nothing.
    public func requestGroupDidStop(_ task: any RequestGroupTask) {}
}
