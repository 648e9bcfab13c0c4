import Foundation

@testable import Errand

/// Back-off waits that are recorded and last a millisecond, ending the loop after `limit` of them.
final class RecordedWaits: Sendable {
    private let delays = Locked<[TimeInterval]>([])
    private let limit: Int

    init(limit: Int = .max) {
        self.limit = limit
    }

    var recorded: [TimeInterval] { delays.withLock { $0 } }

    func backoff(initialDelay: TimeInterval = 0.01, maximumDelay: TimeInterval = 0.08) -> ReconnectBackoff {
        ReconnectBackoff(initialDelay: initialDelay, maximumDelay: maximumDelay) { [self] seconds in
            let count = delays.withLock {
                $0.append(seconds)
                return $0.count
            }
            guard count < limit else { throw CancellationError() }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
    }
}
