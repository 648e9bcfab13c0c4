/// An observer of a batch's or a chain's lifecycle, as ``RequestAccessory`` is of a request's.
///
/// `requestGroupWillStart` is called on the thread that starts the group; the other two just
/// before and after its success or failure callback, on the queue that callback runs on.
///
/// The methods have no defaults: YTKNetwork used one accessory protocol for requests and groups,
/// and a ported accessory whose `requestWillStart(_:)` would silently never be called for a group
/// fails to compile here, naming the three methods a group calls.
public protocol RequestGroupAccessory: Sendable {
    /// The group is about to start.
    func requestGroupWillStart(_ task: any RequestGroupTask)
    /// The group finished; its callbacks are about to run.
    func requestGroupWillStop(_ task: any RequestGroupTask)
    /// The group's callbacks have run.
    func requestGroupDidStop(_ task: any RequestGroupTask)
}
