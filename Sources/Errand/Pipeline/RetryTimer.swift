import Dispatch
import Foundation

/// Waits before a retry: runs work after a delay, and returns what cancels the wait.
struct RetryTimer: Sendable {
    let schedule: @Sendable (_ seconds: TimeInterval, _ work: @escaping @Sendable () -> Void) -> @Sendable () -> Void

    /// Waits on Dispatch's clock.
    static let dispatch = RetryTimer { seconds, work in
        let cancelled = Locked(false)
        DispatchQueue.global(qos: .userInitiated).asyncAfter(deadline: .now() + seconds) {
            if !cancelled[\.self] { work() }
        }
        return { cancelled[\.self] = true }
    }
}
