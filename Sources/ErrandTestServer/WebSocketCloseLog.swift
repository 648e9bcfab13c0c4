import Foundation

/// The close frames `/ws/echo` received from clients, in order, one log per server: what code
/// each carried (`nil` for one without a code). Tests await the next instead of waiting a while.
final class WebSocketCloseLog: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    private let lock = NSLock()
    private var codes: [UInt16?] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<[UInt16?], Never>)] = []

    /// Notes a close frame's code.
    func note(_ code: UInt16?) {
        lock.lock()
        codes.append(code)
        let now = codes
        let ready = waiters.filter { $0.count <= now.count }
        waiters.removeAll { $0.count <= now.count }
        lock.unlock()
        for waiter in ready { waiter.continuation.resume(returning: now) }
    }

    /// The codes, once there are at least `count`.
    func wait(forCount count: Int) async -> [UInt16?] {
        await withCheckedContinuation { continuation in
            lock.lock()
            if codes.count >= count {
                let now = codes
                lock.unlock()
                return continuation.resume(returning: now)
            }
            waiters.append((count, continuation))
            lock.unlock()
        }
    }
}
