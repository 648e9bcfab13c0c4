/// The engine under ``NetworkAgent`` that moves bytes: one request in, a stream of events out.
///
/// Errand ships ``URLSessionTransport`` and ``StubTransport``. A transport speaks only in plain
/// values so that another engine can replace URLSession without the agent noticing.
public protocol Transport: Sendable {
    /// Starts `request` and reports its progress to `events`.
    ///
    /// Events for one request arrive one at a time, in order: at most one
    /// ``TransportEvent/responseHead(statusCode:headers:)``, any number of body chunks and upload
    /// progress reports, then exactly one ``TransportEvent/completed(_:)``, also after `cancel()`.
    func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportTask
}

/// A request in flight in a ``Transport``.
public protocol TransportTask: Sendable {
    /// Stops the request; the transport then completes it with ``ErrandError/cancelled``.
    func cancel()
    /// Asks the transport to stop reading the response body until ``resumeReceiving()``: the
    /// consumer of a ``ResponseStream`` fell behind. Chunks already on their way may still
    /// arrive. Default: nothing, for a transport that cannot pause.
    func pauseReceiving()
    /// Lets a transfer paused by ``pauseReceiving()`` read on. Default: nothing.
    func resumeReceiving()
}

extension TransportTask {
    /// Does nothing: this transport cannot pause a transfer.
    public func pauseReceiving() {}
    /// Does nothing: this transport cannot pause a transfer.
    public func resumeReceiving() {}
}
