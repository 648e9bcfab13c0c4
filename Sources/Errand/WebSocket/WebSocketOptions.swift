import Foundation

/// How a WebSocket is opened and kept: subprotocols, compression, limits and keep-alive.
public struct WebSocketOptions: Sendable, Equatable {
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, most preferred first; the server picks
    /// one or none (``WebSocket/subprotocol``). Default `[]`, offering none.
    public var subprotocols: [String] = []
    /// Whether to offer permessage-deflate (RFC 7692) with `client_max_window_bits`; when the
    /// server accepts, messages are compressed both ways with the window sizes and context
    /// takeover it agreed to. Default `true`.
    public var compression = true
    /// The largest message received, in bytes after decompression; past it the socket is closed
    /// with 1009 and iteration throws ``ErrandError/responseTooLarge(_:)``. Default 16 MiB.
    public var maximumMessageSize = 16 << 20
    /// Seconds between keep-alive pings while the socket is open; `nil` sends none. Default 30.
    public var pingInterval: TimeInterval? = 30
    /// Seconds a ping waits for its pong before the socket is closed and iteration throws
    /// ``ErrandError/timedOut``. Default 10.
    public var pingTimeout: TimeInterval = 10
    /// Seconds ``WebSocket/close(_:reason:)`` waits for the peer's close frame before it drops
    /// the connection. Default 5.
    public var closeTimeout: TimeInterval = 5

    /// The largest ``maximumMessageSize``: 2^48 bytes.
    public static let largestMessageSize = 1 << 48
    /// The shortest interval any option takes: 10 ms.
    public static let shortestInterval: TimeInterval = 0.01
    /// The longest interval any option takes: a year.
    public static let longestInterval: TimeInterval = 365 * 86_400

    /// The defaults: no subprotocol, compression offered, 16 MiB messages, a ping every 30 s
    /// answered within 10 s, a 5 s closing handshake.
    public init() {}
}
