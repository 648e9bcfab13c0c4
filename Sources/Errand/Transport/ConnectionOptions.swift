import Foundation

/// How a transport reaches servers: the HTTP version, connections per host, a proxy, the
/// certificate authorities it trusts, a client certificate, and host names it sends elsewhere.
///
/// Set them once per agent, through ``NetworkConfig/connection`` before the agent makes its
/// transport, or by passing them to ``CurlTransport/init(configuration:connection:bufferLimit:serverTrust:)``
/// or ``URLSessionTransport/init(configuration:connection:serverTrust:)``:
///
///     var connection = ConnectionOptions()
///     connection.trustedRoots = .adding([URL(fileURLWithPath: "/etc/company/root-ca.pem")])
///     connection.proxy = .http(URL(string: "http://proxy.internal:3128")!)
///     let agent = NetworkAgent(transport: CurlTransport(connection: connection))
///
/// ``CurlTransport`` honours every option. An option a transport cannot honour fails each of its
/// requests with an error that names the option, rather than sending the request without it;
/// the "Connections" article has the table.
public struct ConnectionOptions: Sendable, Equatable {
    /// Which HTTP version to speak. Default ``HTTPVersionPreference/automatic``: HTTP/2 over
    /// TLS where the server offers it, concurrent requests to one host sharing one connection.
    public var httpVersion: HTTPVersionPreference = .automatic
    /// The most connections open to one host at once; further requests wait for one. HTTP/2
    /// requests share one connection per host whatever this says. Under ``CurlTransport``, open
    /// streams and WebSockets are counted besides, not against it. Values below 1 count as 1, and
    /// under ``CurlTransport`` values above 2^20 as 2^20.
    /// Default `6`; left at 6, a transport uses its session configuration's
    /// `httpMaximumConnectionsPerHost` instead, so that setting keeps working.
    public var maximumConnectionsPerHost = 6
    /// The proxy to use. Default ``ProxyConfiguration/environment``.
    public var proxy: ProxyConfiguration = .environment
    /// The certificate authorities trusted to sign servers' certificates. Default
    /// ``TrustedRoots/system``.
    public var trustedRoots: TrustedRoots = .system
    /// The certificate presented to servers that ask for one. Default `nil`: none.
    public var clientIdentity: ClientIdentity? = nil
    /// Addresses to connect to instead of resolving a host name, as `curl --resolve` takes them:
    /// `["api.example.com:443": "127.0.0.1"]` sends requests for `https://api.example.com` to
    /// 127.0.0.1, still with `Host: api.example.com` and checking the certificate for that name.
    /// Keys are `host:port`; values an IPv4 or IPv6 address. Default empty.
    public var hostOverrides: [String: String] = [:]
    /// Seconds a connection may sit idle in the pool and still be reused; the first request after
    /// that opens a new one. Set it below a server's own keep-alive timeout, so that no request
    /// goes out on a connection the server is closing. Whole seconds, at least 1 (values below
    /// count as 1). Open WebSockets and streams are not pooled connections: they live as long
    /// as their peer keeps them. Default 118, libcurl's own.
    public var idleConnectionTimeout: TimeInterval = 118

    /// Options with every default: what a transport does without any.
    public init() {}

    /// ``idleConnectionTimeout`` in whole seconds, at least 1; a value that is not a number counts as the default.
    var idleConnectionSeconds: Int {
        let seconds = idleConnectionTimeout.isNaN ? ConnectionOptions().idleConnectionTimeout : idleConnectionTimeout
        return Int(min(max(seconds.rounded(.up), 1), Double(Int32.max)))
    }

    /// The connections per host a transport with `sessionLimit` in its session configuration keeps.
    func connectionsPerHost(sessionLimit: Int) -> Int {
        max(
            1,
            maximumConnectionsPerHost == ConnectionOptions().maximumConnectionsPerHost
                ? sessionLimit : maximumConnectionsPerHost)
    }
}
