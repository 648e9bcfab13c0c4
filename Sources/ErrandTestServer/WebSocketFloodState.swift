import Foundation

/// How the last `/ws/echo?flood=…` went, one per server: the bytes it had sent when the client
/// first stopped taking more (its writes blocked), or `nil` when it sent everything without ever
/// blocking. Tests await it instead of waiting a while.
final class WebSocketFloodState: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    private let lock = NSLock()
    private var outcome: Int??
    private var waiters: [CheckedContinuation<Int?, Never>] = []

    /// Notes the outcome once; later notes are ignored.
    func note(blockedAfter bytes: Int?) {
        lock.lock()
        guard outcome == nil else { return lock.unlock() }
        outcome = .some(bytes)
        let waiting = waiters
        waiters = []
        lock.unlock()
        for waiter in waiting { waiter.resume(returning: bytes) }
    }

    /// The outcome, once there is one.
    func wait() async -> Int? {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let outcome {
                lock.unlock()
                return continuation.resume(returning: outcome)
            }
            waiters.append(continuation)
            lock.unlock()
        }
    }
}
