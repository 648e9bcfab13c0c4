/// What a server's frames broke, with the close code RFC 6455 gives it: the client closes the
/// socket with `code`, and iteration throws the error naming it.
package struct WebSocketProtocolViolation: Error, Sendable, Equatable {
    package var code: WebSocketCloseCode
    package var reason: String

    /// A violation of the framing rules (1002).
    static func protocolError(_ reason: String) -> Self {
        Self(code: .protocolError, reason: reason)
    }
}
