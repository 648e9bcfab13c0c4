import Foundation

@testable import Errand

/// The agent's transport, counting the calls sent and the calls cancelled.
final class CountingTransport: Transport {
    private struct Counted: TransportTask {
        let inner: any TransportTask
        let cancels: Locked<Int>
        func cancel() {
            cancels.withLock { $0 += 1 }
            inner.cancel()
        }
    }

    private let inner: any Transport
    let sends = Locked(0)
    let cancels = Locked(0)

    init(_ inner: any Transport) {
        self.inner = inner
    }

    /// Around the transport the suite runs under (`ERRAND_TRANSPORT`).
    convenience init() {
        self.init(DefaultTransport.make(configuration: .default))
    }

    /// How many calls were sent.
    var count: Int { sends[\.self] }

    func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportTask {
        sends.withLock { $0 += 1 }
        return Counted(inner: inner.send(request, events: events), cancels: cancels)
    }
}
