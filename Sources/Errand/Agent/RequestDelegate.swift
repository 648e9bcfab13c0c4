/// An object told when a request started with ``BaseRequest/start(tag:userInfo:delegate:)`` finishes.
///
/// The delegate is held weakly, as in YTKNetwork, and lives on the main actor: its methods are
/// called on the main queue whatever ``NetworkConfig/callbackQueue`` says, so a view controller
/// can conform without any isolation annotations.
@MainActor
public protocol RequestDelegate: AnyObject, Sendable {
    /// The request succeeded; the response is on `task`. Default: does nothing.
    func requestFinished(_ task: RequestTask)
    /// The request failed; `task.error` says why. Default: does nothing.
    func requestFailed(_ task: RequestTask)
}

extension RequestDelegate {
    /// Default: does nothing.
    public func requestFinished(_ task: RequestTask) {}
    /// Default: does nothing.
    public func requestFailed(_ task: RequestTask) {}
}
