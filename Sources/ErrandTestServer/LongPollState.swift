import Foundation

/// What the long-poll endpoints (``LongPollRoutes``) remember, one per server: the current key,
/// the events published so far (the cursor is how many there are), and whether to drop the next poll.
final class LongPollState: @unchecked Sendable {  // every `var` is read and written only while holding `condition`
    /// What a poll gets.
    enum Answer {
        case events(cursor: Int, [String])
        case keyExpired
        case cursorInvalid(current: Int)
        case drop
    }

    private let condition = NSCondition()
    private var keyNumber = 1
    private var events: [String] = []
    private var dropsNext = false
    private var parameterFetches = 0

    private func locked<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// The current key and cursor, counted as a fetch.
    func parameters() -> (key: String, cursor: Int) {
        locked {
            parameterFetches += 1
            return ("key-\(keyNumber)", events.count)
        }
    }

    var parameterFetchCount: Int { locked { parameterFetches } }

    /// Adds events, waking the polls waiting for them.
    func publish(_ newEvents: [String]) {
        locked {
            events += newEvents
            condition.broadcast()
        }
    }

    /// Makes the current key stale: polls with it get `{"failed": 2}`.
    func expireKey() {
        locked {
            keyNumber += 1
            condition.broadcast()
        }
    }

    /// Makes the next poll close its connection without an answer.
    func dropNextPoll() {
        locked { dropsNext = true }
    }

    /// Waits until there are events after `cursor`, `wait` seconds pass, the key goes stale or
    /// `isStopped` says so, checked every 100 ms.
    func poll(key: String, cursor: Int, wait: TimeInterval, isStopped: () -> Bool) -> Answer {
        let deadline = Date(timeIntervalSinceNow: wait)
        condition.lock()
        defer { condition.unlock() }
        if dropsNext {
            dropsNext = false
            return .drop
        }
        guard cursor >= 0, cursor <= events.count else { return .cursorInvalid(current: events.count) }
        while key == "key-\(keyNumber)", events.count == cursor, Date() < deadline, !isStopped() {
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.1)))
        }
        guard key == "key-\(keyNumber)" else { return .keyExpired }
        return .events(cursor: events.count, Array(events[cursor...]))
    }
}
