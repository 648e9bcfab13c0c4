import Foundation

/// The counter of `/conformance/etag`.
final class ConformanceETag: @unchecked Sendable {  // `current` is read and written only while holding `lock`
    private let lock = NSLock()
    private var current = 0

    /// The tag to send, and whether `sent` matched it (the counter then moves on).
    func next(matching sent: String?) -> (tag: String, isNotModified: Bool) {
        lock.withLock {
            guard let sent, Int(sent) == current else { return (String(current), false) }
            current += 1
            return (String(current - 1), true)
        }
    }
}
