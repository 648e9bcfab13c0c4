import Foundation

// YTKNetwork's names, as Swift imports them, each pointing at Errand's: code ported line by line
// fails to compile with a fix-it instead of calling nothing. Overrides cannot be caught this way
// (Swift allows unavailable requirements only in `@objc` protocols); "Migrating from YTKNetwork"
// lists every one with its Errand signature.

/// YTKNetwork's request base class; conform to ``BaseRequest`` instead.
@available(*, unavailable, renamed: "BaseRequest")
public typealias YTKBaseRequest = BaseRequest

/// YTKNetwork's request class; conform to ``BaseRequest`` instead.
@available(*, unavailable, renamed: "BaseRequest")
public typealias YTKRequest = BaseRequest

/// YTKNetwork's configuration; see ``NetworkConfig``.
@available(*, unavailable, renamed: "NetworkConfig")
public typealias YTKNetworkConfig = NetworkConfig

/// YTKNetwork's agent; see ``NetworkAgent``.
@available(*, unavailable, renamed: "NetworkAgent")
public typealias YTKNetworkAgent = NetworkAgent

/// YTKNetwork's batch; see ``BatchRequest``.
@available(*, unavailable, renamed: "BatchRequest")
public typealias YTKBatchRequest = BatchRequest

/// YTKNetwork's chain; see ``ChainRequest``.
@available(*, unavailable, renamed: "ChainRequest")
public typealias YTKChainRequest = ChainRequest

/// YTKNetwork's request delegate; see ``RequestDelegate``, whose methods take the ``RequestTask``.
@available(*, unavailable, renamed: "RequestDelegate")
public typealias YTKRequestDelegate = RequestDelegate

/// YTKNetwork's batch delegate; see ``BatchRequestDelegate``.
@available(*, unavailable, renamed: "BatchRequestDelegate")
public typealias YTKBatchRequestDelegate = BatchRequestDelegate

/// YTKNetwork's chain delegate; see ``ChainRequestDelegate``, whose failure method is
/// `chainRequestFailed(_:)`, with the failed step on ``ChainTask/failedTask``.
@available(*, unavailable, renamed: "ChainRequestDelegate")
public typealias YTKChainRequestDelegate = ChainRequestDelegate

/// YTKNetwork's accessory; a request's is a ``RequestAccessory``, a batch's or chain's a
/// ``RequestGroupAccessory``.
@available(*, unavailable, renamed: "RequestAccessory")
public typealias YTKRequestAccessory = RequestAccessory

/// YTKNetwork's URL filter protocol; see ``URLFilter``.
@available(*, unavailable, renamed: "URLFilter")
public typealias YTKUrlFilterProtocol = URLFilter

/// YTKNetwork's cache folder filter protocol; see ``CacheDirPathFilter``.
@available(*, unavailable, renamed: "CacheDirPathFilter")
public typealias YTKCacheDirPathFilterProtocol = CacheDirPathFilter

extension BaseRequest {
    /// YTKNetwork's start with blocks; Errand's takes closures that get the ``RequestTask``.
    @available(*, unavailable, renamed: "start(success:failure:)")
    public func startWithCompletionBlock(
        success: (@Sendable (RequestTask) -> Void)?, failure: (@Sendable (RequestTask) -> Void)?
    ) {}

    /// YTKNetwork's cache store; see ``saveCache(_:)``.
    @available(*, unavailable, renamed: "saveCache(_:)")
    public func saveResponseDataToCacheFile(_ data: Data) {}

    /// A task drops its callbacks once it has called back; there is nothing to clear.
    @available(*, unavailable, message: "A RequestTask drops its callbacks once it has called back")
    public func clearCompletionBlock() {}
}

extension RequestTask {
    /// YTKNetwork's `stop`; see ``cancel()``.
    @available(*, unavailable, renamed: "cancel()")
    public func stop() {}
}

extension BatchTask {
    /// YTKNetwork's `stop`; see ``cancel()``.
    @available(*, unavailable, renamed: "cancel()")
    public func stop() {}
}

extension ChainTask {
    /// YTKNetwork's `stop`; see ``cancel()``.
    @available(*, unavailable, renamed: "cancel()")
    public func stop() {}
}

extension BatchRequest {
    /// YTKNetwork's initializer; see ``init(requests:runsToEnd:agent:)``.
    @available(*, unavailable, renamed: "init(requests:)")
    public init(requestArray: [any BaseRequest]) { self.init(requests: requestArray) }
}

extension NetworkAgent {
    /// YTKNetwork's `addRequest:`; see ``start(_:tag:userInfo:success:failure:)``.
    @available(*, unavailable, renamed: "start(_:)")
    public func add(_ request: any BaseRequest) {}

    /// YTKNetwork's `cancelRequest:`; cancel the ``RequestTask`` that `start` returned.
    @available(*, unavailable, message: "Call cancel() on the RequestTask that start returned")
    public func cancel(_ request: any BaseRequest) {}
}

extension NetworkConfig {
    /// YTKNetwork's `clearUrlFilter`; see ``clearUrlFilters()``.
    @available(*, unavailable, renamed: "clearUrlFilters()")
    public func clearUrlFilter() {}

    /// YTKNetwork's `clearCacheDirPathFilter`; see ``clearCacheDirPathFilters()``.
    @available(*, unavailable, renamed: "clearCacheDirPathFilters()")
    public func clearCacheDirPathFilter() {}
}
