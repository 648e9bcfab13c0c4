import Foundation

/// What a WebSocket needs of the connection its transport upgraded, beside reading it (the
/// transport task's body events): writing bytes in order, and ending it — always within a
/// bound, whatever the peer does. `cancel()` drops it at once.
protocol WebSocketConnection: TransportTask {
    /// Sends `bytes` after those written before; `completion` runs once the transport took them
    /// all, or with why it could not — on any thread, the transport's own or the caller's inside
    /// this call, so it only hands the outcome on.
    func write(_ bytes: Data, completion: @escaping @Sendable (ErrandError?) -> Void)
    /// Sends `bytes` — a close frame — and then ends the connection as ``close(within:endingWith:)``
    /// does, as one step: the peer, answering, may close the connection at once, and that must
    /// not complete the task first.
    func writeLast(_ bytes: Data, within seconds: TimeInterval, endingWith error: ErrandError?)
    /// Ends the connection once what was written before went out and the peer closed it, or
    /// `seconds` from now at the latest, completing the transport task with `error` whatever the
    /// peer does meanwhile: `nil` after a clean closing handshake, which makes the request a
    /// success.
    func close(within seconds: TimeInterval, endingWith error: ErrandError?)
}

extension CurlTask: WebSocketConnection {}
