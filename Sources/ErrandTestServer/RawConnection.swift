import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The socket of one connection, handed to the writer of an ``HTTPResponse/raw(_:)`` response:
/// what it writes goes on the wire as it is, with no status line or framing added.
struct RawConnection: Sendable {
    /// How the connection ends once the writer returns.
    enum Ending: Sendable {
        /// An orderly close (FIN): the client reads everything written, then end of stream.
        case close
        /// A TCP reset (RST): the client's next read fails with "connection reset by peer".
        case reset
    }

    typealias Writer = @Sendable (RawConnection) -> Ending

    let descriptor: Int32
    let server: ServerState

    /// Sends `bytes`; `false` once the client is gone or the server is stopping.
    func write(_ bytes: Data) -> Bool {
        !server.isStopped && Socket.sendAll(descriptor, bytes)
    }

    func write(_ text: String) -> Bool {
        write(Data(text.utf8))
    }

    /// Waits like `Thread.sleep`, but returns as soon as the server stops.
    func sleep(seconds: TimeInterval) {
        server.sleep(seconds: seconds)
    }

    /// Waits, sending nothing, until the client sends or hangs up, the server stops (which shuts
    /// the socket down and so wakes the wait) or `seconds` pass.
    func waitForClient(atMost seconds: TimeInterval) {
        var descriptors = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(min(max(seconds, 0), 86_400) * 1000)
        while !server.isStopped && poll(&descriptors, 1, milliseconds) < 0 && errno == EINTR {}
    }
}
