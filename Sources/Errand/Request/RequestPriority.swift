/// The order in which queued requests start when ``NetworkAgent/maxConcurrentRequests`` are running.
///
/// Requests of higher priority start first; equal priorities start in the order they were started.
public enum RequestPriority: Int, Sendable, Comparable, CaseIterable {
    /// Starts after every waiting request of higher priority.
    case low = -4
    /// The priority of a request that names none.
    case `default` = 0
    /// Starts before every waiting request of lower priority.
    case high = 4

    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
