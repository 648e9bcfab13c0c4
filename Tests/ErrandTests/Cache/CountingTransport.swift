import Errand
import Foundation

/// The transport the suite runs under (`ERRAND_TRANSPORT`), counting what is handed to it: a
/// request that never reaches the transport never opens a connection.
final class CountingTransport: Transport, @unchecked Sendable {  // Sendable because `lock` guards `count`.
    private let base: any Transport
    private let lock = NSLock()
    private var _count = 0

    init() {
        let wantsURLSession = ProcessInfo.processInfo.environment["ERRAND_TRANSPORT"] == "urlsession"
        base = wantsURLSession || !CurlTransport.isAvailable ? URLSessionTransport() : CurlTransport()
    }

    /// How many requests were sent.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return _count
    }

    func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportTask {
        lock.lock()
        _count += 1
        lock.unlock()
        return base.send(request, events: events)
    }
}
