import Foundation

/// What a WebSocket needs of the connection its transport upgraded, beside reading (the
/// transport task's body events) and dropping it (`cancel()`): writing bytes, in order.
protocol WebSocketConnection: TransportTask {
    /// Sends `bytes` after those written before; `completion` runs once the transport took them
    /// all, or with why it could not. Off the transport's own thread.
    func write(_ bytes: Data, completion: @escaping @Sendable (ErrandError?) -> Void)
}

extension CurlTask: WebSocketConnection {}
