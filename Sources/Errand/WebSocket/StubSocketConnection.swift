import Foundation

/// The client's end of a ``StubTransport`` socket: what it writes goes to the
/// ``StubWebSocketPeer``, and ending it ends the peer's connection.
final class StubSocketConnection: WebSocketConnection {
    let peer: StubWebSocketPeer

    init(peer: StubWebSocketPeer) {
        self.peer = peer
    }

    func cancel() {
        peer.end(.cancelled)
    }

    func write(_ bytes: Data, completion: @escaping @Sendable (ErrandError?) -> Void) {
        peer.clientWrote(bytes)
        completion(nil)
    }

    func writeLast(_ bytes: Data, within seconds: TimeInterval, endingWith error: ErrandError?) {
        peer.clientWrote(bytes)
        peer.end(error)
    }

    func close(within seconds: TimeInterval, endingWith error: ErrandError?) {
        peer.end(error)
    }
}
