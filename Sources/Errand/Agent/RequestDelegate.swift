/// An object told when a request started with ``BaseRequest/start(tag:userInfo:delegate:)``
/// finishes, and, if it implements the progress methods, how its bodies are getting on.
///
/// The delegate is held weakly, as in YTKNetwork, and lives on the main actor: its methods are
/// called on the main queue whatever ``NetworkConfig/callbackQueue`` says, so a view controller
/// can conform without any isolation annotations.
///
/// ``requestFinished(_:)`` and ``requestFailed(_:)`` have no default: a delegate whose method
/// is misspelled — a port that takes the request instead of the task, say — fails to compile
/// instead of never being called. The progress methods are optional.
@MainActor
public protocol RequestDelegate: AnyObject, Sendable {
    /// The request succeeded; the response is on `task`.
    func requestFinished(_ task: RequestTask)
    /// The request failed, or was cancelled; `task.error` says why.
    func requestFailed(_ task: RequestTask)
    /// Bytes of the response body received so far — of any request, and for a download the bytes
    /// on disk; newest value only when calls would queue up. Default: does nothing.
    func request(_ task: RequestTask, didUpdateDownloadProgress progress: TransferProgress)
    /// Bytes of the request body sent so far; newest value only when calls would queue up.
    /// Default: does nothing.
    func request(_ task: RequestTask, didUpdateUploadProgress progress: TransferProgress)
}

extension RequestDelegate {
    /// Default: does nothing.
    public func request(_ task: RequestTask, didUpdateDownloadProgress progress: TransferProgress) {}
    /// Default: does nothing.
    public func request(_ task: RequestTask, didUpdateUploadProgress progress: TransferProgress) {}
}
