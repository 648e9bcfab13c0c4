/// Rewrites the directory a request's cached responses are stored in.
///
/// Filters run in the order they were added to ``NetworkConfig``. The usual use is a
/// per-account cache: a filter appends the signed-in account's id to the path.
public protocol CacheDirPathFilter: Sendable {
    /// Returns the directory path to use in place of `originPath` for `request`.
    func filterCacheDirPath(_ originPath: String, request: any BaseRequest) -> String
}
