/// Named values for ``BaseRequest/cacheTimeInSeconds``:
///
/// ```swift
/// struct FeedRequest: BaseRequest {
///     var url: String { "/feed" }
///     var cacheTimeInSeconds: Int { CacheLifetime.hour }
/// }
/// ```
/// A month is 30 days and a year 365 days: cache lifetimes need no calendar.
public enum CacheLifetime {
    /// 60 seconds.
    public static let minute = 60
    /// 3,600 seconds.
    public static let hour = 60 * minute
    /// 86,400 seconds.
    public static let day = 24 * hour
    /// 604,800 seconds: 7 days.
    public static let week = 7 * day
    /// 2,592,000 seconds: 30 days.
    public static let month = 30 * day
    /// 31,536,000 seconds: 365 days.
    public static let year = 365 * day
}
