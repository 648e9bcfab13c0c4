import Foundation

/// How a WebSocket is opened and kept: subprotocols, compression, limits and keep-alive.
///
/// Every value set is kept within what a socket can use, and reads back as it is used: sizes
/// and intervals are clamped to the ranges each property gives, and a time that is not a
/// number (`.nan`) is read as the default.
public struct WebSocketOptions: Sendable, Equatable {
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, most preferred first; the server picks
    /// one or none (``WebSocket/subprotocol``). Each must be an HTTP token (RFC 6455 §4.1), else
    /// ``NetworkAgent/webSocket(_:options:)`` throws before anything is sent. Default `[]`,
    /// offering none.
    public var subprotocols: [String] = []
    /// Whether to offer permessage-deflate (RFC 7692) with `client_max_window_bits`; when the
    /// server accepts, messages are compressed both ways with the window sizes and context
    /// takeover it agreed to. Default `true`.
    public var compression = true
    /// The largest message received, in bytes after decompression; past it the socket is closed
    /// with 1009 and iteration throws ``ErrandError/responseTooLarge(_:)``. Also how many bytes of
    /// messages wait for a consumer that fell behind before the reading pauses, each message
    /// counting 64 bytes besides its own, so that a flood of empty ones pauses it too. Between 1
    /// and ``largestMessageSize``. Default 16 MiB.
    public var maximumMessageSize: Int {
        get { messageSize }
        set { messageSize = min(max(newValue, 1), Self.largestMessageSize) }
    }
    /// Seconds between keep-alive pings while the socket is open; `nil` sends none, as does zero,
    /// a negative value or one that is not finite. At least ``shortestInterval``. Default 30.
    public var pingInterval: TimeInterval? {
        get { interval }
        set { interval = newValue.flatMap { $0 > 0 && $0.isFinite ? Self.clamped($0, default: 30) : nil } }
    }
    /// Seconds a ping waits for its pong before the socket is closed and iteration throws
    /// ``ErrandError/timedOut``, counted while the consumer keeps up. Between ``shortestInterval``
    /// and ``longestInterval``. Default 10.
    public var pingTimeout: TimeInterval {
        get { timeout }
        set { timeout = Self.clamped(newValue, default: 10) }
    }
    /// Seconds ``WebSocket/close(_:reason:)`` waits for the peer's close frame before it drops
    /// the connection, and the most a closing or failed connection is given to send its last
    /// frame and hear the peer close. Between 0 and ``longestInterval``. Default 5.
    public var closeTimeout: TimeInterval {
        get { closeWait }
        set { closeWait = newValue.isNaN ? 5 : min(max(newValue, 0), Self.longestInterval) }
    }

    /// The largest ``maximumMessageSize``: 2^48 bytes.
    public static let largestMessageSize = 1 << 48
    /// The shortest ``pingInterval`` and ``pingTimeout``: 10 ms.
    public static let shortestInterval: TimeInterval = 0.01
    /// The longest interval any option takes: a year.
    public static let longestInterval: TimeInterval = 365 * 86_400

    private var messageSize = 16 << 20
    private var interval: TimeInterval? = 30
    private var timeout: TimeInterval = 10
    private var closeWait: TimeInterval = 5

    /// The defaults: no subprotocol, compression offered, 16 MiB messages, a ping every 30 s
    /// answered within 10 s, a 5 s closing handshake.
    public init() {}

    private static func clamped(_ seconds: TimeInterval, default value: TimeInterval) -> TimeInterval {
        seconds.isNaN ? value : min(max(seconds, shortestInterval), longestInterval)
    }
}
