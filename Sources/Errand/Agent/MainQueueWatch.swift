import Dispatch
import Foundation

/// Notices callbacks that wait for a main queue nobody services — a command-line tool blocked on
/// a semaphore never gets them — and says so once in the debug log.
///
/// Only used while ``NetworkConfig/debugLogEnabled`` is on. It costs a lock per main-queue
/// callback and keeps at most one timer in flight, for the oldest callback still waiting.
final class MainQueueWatch: Sendable {
    /// The watch agents share, so a process warns once.
    static let shared = MainQueueWatch()

    private struct State {
        var nextTicket = 0
        var waitingSince: [Int: DispatchTime] = [:]
        var isArmed = false
        var hasWarned = false
    }

    private let state = Locked(State())
    private let threshold: Double
    private let write: @Sendable (String) -> Void

    /// - Parameters:
    ///   - threshold: Seconds a callback may wait for the main queue before the warning. Default 5.
    ///   - write: Where the warning goes. Default: the debug log's standard error.
    init(threshold: Double = 5, write: @escaping @Sendable (String) -> Void = DebugLog.write) {
        self.threshold = threshold
        self.write = write
    }

    /// Records a callback queued for the main queue; `nil` once the warning was given.
    func enqueued() -> Int? {
        let (ticket, arms) = state.withLock { state -> (Int?, Bool) in
            guard !state.hasWarned else { return (nil, false) }
            state.nextTicket += 1
            state.waitingSince[state.nextTicket] = .now()
            defer { state.isArmed = true }
            return (state.nextTicket, !state.isArmed)
        }
        if arms { check(after: threshold) }
        return ticket
    }

    /// Records that the callback with `ticket` is running.
    func ran(_ ticket: Int) {
        state.withLock { _ = $0.waitingSince.removeValue(forKey: ticket) }
    }

    private func check(after seconds: Double) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + seconds) { [self] in check() }
    }

    private func check() {
        let now = DispatchTime.now()
        enum Next {
            case idle
            case warn(waited: Double, waiting: Int)
            case recheck(after: Double)
        }
        let next = state.withLock { state -> Next in
            guard let oldest = state.waitingSince.values.min() else {
                state.isArmed = false
                return .idle
            }
            let waited = Double(now.uptimeNanoseconds &- oldest.uptimeNanoseconds) / 1_000_000_000
            guard waited >= threshold else { return .recheck(after: threshold - waited) }
            state.isArmed = false
            state.hasWarned = true
            let waiting = state.waitingSince.count
            state.waitingSince = [:]
            return .warn(waited: waited, waiting: waiting)
        }
        switch next {
        case .idle: break
        case .recheck(let seconds): check(after: seconds)
        case .warn(let waited, let waiting):
            write(
                "[Errand] warning: \(waiting) callback(s) waited \(String(format: "%.1f", waited)) s for the main "
                    + "queue, which nothing is running. A command-line tool can await response(), call "
                    + "dispatchMain(), or set NetworkConfig.callbackQueue to a queue of its own.")
        }
    }
}
