/// An observer of one task's lifecycle, such as a spinner that shows while a request runs.
///
/// `requestWillStart` is called on the thread that starts the task; `requestWillStop` and
/// `requestDidStop` are called just before and just after the success or failure callback,
/// on the queue that callback runs on. Cache-served responses go through the same calls.
/// A request's own come from ``BaseRequest/requestAccessories``; those every request has, from
/// ``NetworkConfig/addRequestAccessory(_:)``; and an interceptor of the request that is an
/// accessory too is one (``AuthenticationInterceptor`` binds a request to its account so).
public protocol RequestAccessory: Sendable {
    /// The task is about to start. Default: does nothing.
    func requestWillStart(_ task: RequestTask)
    /// The task finished; its callbacks are about to run. Default: does nothing.
    func requestWillStop(_ task: RequestTask)
    /// The task's callbacks have run. Default: does nothing.
    func requestDidStop(_ task: RequestTask)
}

extension RequestAccessory {
    /// Default: does nothing.
    public func requestWillStart(_ task: RequestTask) {}
    /// Default: does nothing.
    public func requestWillStop(_ task: RequestTask) {}
    /// Default: does nothing.
    public func requestDidStop(_ task: RequestTask) {}
}
