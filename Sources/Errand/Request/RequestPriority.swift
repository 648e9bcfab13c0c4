/// The order in which queued requests start when ``NetworkAgent/maxConcurrentRequests`` are running.
///
/// Requests of higher priority start first; equal priorities start in the order they were started.
public enum RequestPriority: Int, Sendable, Comparable, CaseIterable {
    case low = -4
    case `default` = 0
    case high = 4

    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
