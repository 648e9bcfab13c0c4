/// Rewrites a request's relative `url` before the base URL is applied.
///
/// Filters run in the order they were added to ``NetworkConfig``. Absolute URLs skip them.
/// Typical uses: appending common query arguments such as an app version or a channel id.
public protocol URLFilter: Sendable {
    /// Returns the URL to use in place of `originUrl` for `request`.
    func filterUrl(_ originUrl: String, request: any BaseRequest) -> String
}
