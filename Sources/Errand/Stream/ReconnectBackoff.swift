import Foundation

/// How long a ``LongPoll`` or an ``EventSource`` waits before trying again after the network
/// failed: `initialDelay`, then each wait `multiplier` times the one before, at most `maximumDelay`.
public struct ReconnectBackoff: Sendable {
    /// The first wait, in seconds. Default `1`.
    public var initialDelay: TimeInterval
    /// The longest wait, in seconds. Default `60`.
    public var maximumDelay: TimeInterval
    /// How much longer each wait is than the one before. Default `2`.
    public var multiplier: Double
    /// How a wait is made; it throws when the waiting task is cancelled. Default `Task.sleep`.
    /// Tests pass one that records the delays and returns at once.
    public var sleep: @Sendable (TimeInterval) async throws -> Void

    /// A back-off from `initialDelay` (default 1 s), growing by `multiplier` (default 2) up to
    /// `maximumDelay` (default 60 s), waiting with `sleep` (default `Task.sleep`).
    public init(
        initialDelay: TimeInterval = 1, maximumDelay: TimeInterval = 60, multiplier: Double = 2,
        sleep: @escaping @Sendable (TimeInterval) async throws -> Void = ReconnectBackoff.taskSleep
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.multiplier = multiplier
        self.sleep = sleep
    }

    /// Waits `seconds` with `Task.sleep`, throwing `CancellationError` when the task is cancelled.
    @Sendable public static func taskSleep(_ seconds: TimeInterval) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, min(seconds, 86_400)) * 1_000_000_000))
    }

    /// The wait after `failures` failures in a row (from 1).
    func delay(afterFailures failures: Int) -> TimeInterval {
        let grown = initialDelay * pow(max(multiplier, 1), Double(max(failures - 1, 0)))
        return max(0, min(grown, maximumDelay))
    }
}

/// The name ``ReconnectBackoff`` had when only ``LongPoll`` used it.
public typealias LongPollBackoff = ReconnectBackoff
