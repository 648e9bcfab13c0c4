import Foundation

/// Where a transport's connections go before the server; see ``ConnectionOptions/proxy``.
///
/// Credentials go in the proxy's URL (`http://user:password@proxy.example.com:3128`,
/// percent-encoded). They are sent only to the proxy, never logged, and ``description`` masks the
/// password.
public enum ProxyConfiguration: Sendable, Equatable, CustomStringConvertible {
    /// The proxy the environment names, as the `curl` command reads it: `http_proxy` for `http`
    /// URLs (lowercase only), `https_proxy` or `HTTPS_PROXY` for `https`, `all_proxy` or
    /// `ALL_PROXY` for both, and `no_proxy` or `NO_PROXY` for hosts that bypass it. The default.
    case environment
    /// No proxy, whatever the environment says.
    case none
    /// An HTTP proxy (`http://host:port`, or `https://` for a proxy reached over TLS): `http`
    /// requests go to it whole, `https` ones through a `CONNECT` tunnel, so it never sees their
    /// content. Every request uses it; `no_proxy` does not apply.
    case http(URL)
    /// A SOCKS5 proxy (`socks5://host:port`), which also resolves the servers' host names, so
    /// they never reach the local resolver. Every request uses it; `no_proxy` does not apply.
    case socks5(URL)

    /// The configuration with a proxy's password masked.
    public var description: String {
        switch self {
        case .environment: "environment"
        case .none: "none"
        case .http(let url): "http(\(Redactor.url(url)))"
        case .socks5(let url): "socks5(\(Redactor.url(url)))"
        }
    }
}
