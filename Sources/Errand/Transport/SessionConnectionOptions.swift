import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// What ``URLSessionTransport`` makes of ``ConnectionOptions``: the options its session can
/// honour go into the session's configuration; any other fails each request, naming the option.
enum SessionConnectionOptions {
    /// The proxy variables libcurl reads, under FoundationNetworking as under the `curl` command.
    private static let proxyVariables = ["http_proxy", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]

    /// Why a session cannot connect as `connection` says; `nil` when it can.
    static func refusal(of connection: ConnectionOptions, environment: [String: String]) -> ErrandError? {
        var options: [String] = []
        if connection.httpVersion != .automatic { options.append("httpVersion (.\(connection.httpVersion))") }
        if connection.trustedRoots != .system && connection.trustedRoots != .adding([]) {
            options.append("trustedRoots")
        }
        if connection.clientIdentity != nil { options.append("clientIdentity") }
        if !connection.hostOverrides.isEmpty { options.append("hostOverrides") }
        if connection.idleConnectionSeconds != ConnectionOptions().idleConnectionSeconds {
            options.append("idleConnectionTimeout")
        }
        if let proxy = proxyRefusal(connection.proxy, environment: environment) { options.append(proxy) }
        guard !options.isEmpty else { return nil }
        #if canImport(FoundationNetworking)
            let platform = "FoundationNetworking on Linux"
        #else
            let platform = "URLSession here"
        #endif
        let reason =
            "URLSessionTransport cannot honour ConnectionOptions."
            + options.joined(separator: ", ConnectionOptions.")
            + ": \(platform) offers no way to set \(options.count == 1 ? "it" : "them"); use CurlTransport, which"
            + " honours every connection option"
        return .transport(URLError(.unsupportedURL, userInfo: [NSLocalizedDescriptionKey: reason]))
    }

    /// Why a request to `url` cannot go through a session: a Unix-socket URL, which it cannot reach.
    static func refusal(of url: URL) -> ErrandError? {
        guard UnixSocketURL.isUnixSocket(url) else { return nil }
        let reason =
            "URLSessionTransport cannot reach a server on a Unix socket (\(url.scheme ?? "")); use CurlTransport"
        return .transport(
            URLError(.unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: reason]))
    }

    /// `configuration` with the options a session honours applied.
    static func apply(_ connection: ConnectionOptions, to configuration: URLSessionConfiguration) {
        configuration.httpMaximumConnectionsPerHost = connection.connectionsPerHost(
            sessionLimit: configuration.httpMaximumConnectionsPerHost)
        #if !canImport(FoundationNetworking)
            if let dictionary = proxyDictionary(connection.proxy) {
                configuration.connectionProxyDictionary = dictionary
            }
        #endif
    }

    #if canImport(FoundationNetworking)
        /// FoundationNetworking leaves its libcurl to read the environment's proxy and ignores
        /// `connectionProxyDictionary`: only what the environment says can be honoured.
        private static func proxyRefusal(_ proxy: ProxyConfiguration, environment: [String: String]) -> String? {
            switch proxy {
            case .environment: return nil
            case .none:
                let set = proxyVariables.filter { !(environment[$0] ?? "").isEmpty }
                return set.isEmpty ? nil : "proxy (.none, while \(set.joined(separator: ", ")) is set)"
            case .http, .socks5: return "proxy (\(proxy))"
            }
        }
    #else
        /// A proxy with credentials cannot go into `connectionProxyDictionary`.
        private static func proxyRefusal(_ proxy: ProxyConfiguration, environment: [String: String]) -> String? {
            switch proxy {
            case .http(let url), .socks5(let url):
                return url.user == nil && url.host != nil ? nil : "proxy (\(proxy): credentials or no host)"
            case .environment, .none: return nil
            }
        }

        /// The session's proxy settings; `nil` for the system's.
        private static func proxyDictionary(_ proxy: ProxyConfiguration) -> [AnyHashable: Any]? {
            switch proxy {
            case .environment: return nil
            case .none: return [:]
            case .http(let url):
                let host = url.host ?? "", port = url.port ?? 80
                return [
                    "HTTPEnable": 1, "HTTPProxy": host, "HTTPPort": port,
                    "HTTPSEnable": 1, "HTTPSProxy": host, "HTTPSPort": port,
                ]
            case .socks5(let url):
                return ["SOCKSEnable": 1, "SOCKSProxy": url.host ?? "", "SOCKSPort": url.port ?? 1080]
            }
        }
    #endif
}
