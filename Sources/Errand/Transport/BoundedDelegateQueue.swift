import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking

    /// The session's delegate queue on Linux, with backpressure.
    ///
    /// FoundationNetworking hands the delegate queue an operation for every chunk libcurl
    /// receives, without waiting, and cannot pause a transfer. When the delegate falls behind — a
    /// download to a slow disk, a busy machine — the chunks pile up in memory without limit (a 1 GiB
    /// download over loopback peaked at over 600 MiB). Here, once `limit` operations wait, the
    /// thread that adds one waits for a free slot; that thread is libcurl's, so it stops reading
    /// the socket, and TCP slows the sender down.
    ///
    /// The wait is short and bounded: a delegate call can itself wait for libcurl's thread (some
    /// URLSession calls synchronise with it), and an unbounded wait would then be a deadlock. That
    /// thread is also every URLSession's in the process (their queues target one shared queue),
    /// so a long wait would hold up all of them.
    /// After `maximumWait` the operation is queued anyway, beyond the limit.
    final class BoundedDelegateQueue: OperationQueue, @unchecked Sendable {  // Sendable: `slots` is a semaphore.
        private let slots: DispatchSemaphore

        init(limit: Int) {
            slots = DispatchSemaphore(value: limit)
            super.init()
            maxConcurrentOperationCount = 1
            name = "Errand.URLSessionTransport.delegate"
        }

        override func addOperation(_ block: @escaping @Sendable () -> Void) {
            // An operation that adds another would wait for itself.
            guard OperationQueue.current !== self, slots.wait(timeout: .now() + Self.maximumWait) == .success else {
                return super.addOperation(block)
            }
            super.addOperation { [slots] in
                block()
                slots.signal()
            }
        }

        private static let maximumWait = DispatchTimeInterval.milliseconds(10)
    }
#endif
