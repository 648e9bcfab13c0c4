import Foundation

/// Timings and protocol of one exchange, as a ``TransportEvent/metrics(_:)`` reports them.
///
/// Durations are in seconds from the start of the last attempt (after redirects, the last hop),
/// each one including the phases before it, the way libcurl measures them; a phase that did not
/// happen — no DNS lookup for an IP address, no TLS for `http`, a reused connection — is `0`.
public struct TransportMetrics: Sendable, Equatable {
    /// Until the host name was resolved.
    public var domainLookup: TimeInterval
    /// Until the TCP connection was established.
    public var connect: TimeInterval
    /// Until the TLS handshake finished; `0` for plain HTTP.
    public var secureConnection: TimeInterval
    /// Until the first byte of the response arrived.
    public var firstByte: TimeInterval
    /// Until the last hop ended.
    public var total: TimeInterval
    /// The protocol the final response came over, such as `"HTTP/1.1"` or `"HTTP/2"`; `nil` when unknown.
    public var httpVersion: String?
    /// How many redirects were followed before the final response.
    public var redirectCount: Int
    /// Whether the last hop went over a connection an earlier request opened (keep-alive, or an
    /// HTTP/2 connection it shared); `nil` when unknown.
    public var isReusedConnection: Bool?
    /// The IP address the last hop connected to (the proxy's, through a proxy); `nil` when unknown.
    public var remoteAddress: String?
    /// When the request timed out never sent, with more requests to its host in flight than it may
    /// have connections: that limit (``ConnectionOptions/maximumConnectionsPerHost``), for the
    /// debug log to name. `CurlTransport` only.
    var exhaustedConnectionLimit: Int?

    /// Creates metrics; every value defaults to zero or `nil`.
    public init(
        domainLookup: TimeInterval = 0, connect: TimeInterval = 0, secureConnection: TimeInterval = 0,
        firstByte: TimeInterval = 0, total: TimeInterval = 0, httpVersion: String? = nil, redirectCount: Int = 0,
        isReusedConnection: Bool? = nil, remoteAddress: String? = nil
    ) {
        self.domainLookup = domainLookup
        self.connect = connect
        self.secureConnection = secureConnection
        self.firstByte = firstByte
        self.total = total
        self.httpVersion = httpVersion
        self.redirectCount = redirectCount
        self.isReusedConnection = isReusedConnection
        self.remoteAddress = remoteAddress
    }
}
