import Foundation

/// What the streams of one scale run report as they go: each one opened (or failed to), and
/// each one's latencies once it ended. Lets the run wait until every stream has opened.
final class ScaleRecorder: @unchecked Sendable {  // Sendable: every access holds `lock`.
    private let lock = NSLock()
    private let streams: Int
    private var opened = 0
    private var settled = 0
    private var latencies: [Int64] = []
    private var failures: [String] = []
    private var waiter: CheckedContinuation<Void, Never>?

    init(streams: Int) {
        self.streams = streams
    }

    /// A stream's response head arrived: it is open.
    func didOpen() {
        settle { opened += 1 }
    }

    /// A stream could not open.
    func didNotOpen(_ error: any Error) {
        settle { failures.append("opening: \(error)") }
    }

    /// A stream ended, with the latency of each event it read, in nanoseconds; `error` if it
    /// ended with one rather than at the body's end.
    func didEnd(latencies streamLatencies: [Int64], error: (any Error)?) {
        lock.withLock {
            latencies += streamLatencies
            if let error { failures.append("reading: \(error)") }
        }
    }

    /// Returns once every stream has opened or failed to.
    func waitUntilSettled() async {
        await withCheckedContinuation { continuation in
            let isSettled = lock.withLock {
                if settled == streams { return true }
                waiter = continuation
                return false
            }
            if isSettled { continuation.resume() }
        }
    }

    var openCount: Int { lock.withLock { opened } }
    var allLatencies: [Int64] { lock.withLock { latencies } }
    var allFailures: [String] { lock.withLock { failures } }

    private func settle(_ change: () -> Void) {
        let waiter = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            change()
            settled += 1
            guard settled == streams else { return nil }
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume()
    }
}
