import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1 that answers a subset of httpbin's endpoints, for
/// tests, examples and benchmarks.
///
/// ```swift
/// let server = try TestServer()          // ephemeral port, already accepting
/// let url = server.baseURL + "/get?x=1"  // "http://127.0.0.1:54321/get?x=1"
/// defer { server.stop() }
/// ```
///
/// Endpoints (shapes and status codes follow httpbin 0.10.4): `/get`, `/post`, `/put`,
/// `/patch`, `/delete`, `/anything[/…]`, `/headers`, `/status/{codes}`, `/response-headers`,
/// `/basic-auth/{user}/{passwd}`, `/delay/{seconds}`, `/bytes/{n}`, `/json`.
///
/// Connections are kept alive, each is served on its own thread, and request bodies may be
/// sent with `Content-Length` or chunked. Responses always carry `Content-Length` (except
/// where HTTP forbids a body: 1xx, 204, 304).
public final class TestServer: Sendable {
    /// The port the server listens on; the kernel's choice when `init` was given 0.
    public let port: UInt16

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    public var baseURL: String {
        "http://127.0.0.1:\(port)"
    }

    private let state: ServerState

    /// Binds 127.0.0.1:`port` (0 picks a free port) and starts accepting connections at once.
    /// - Throws: ``TestServerError`` naming the socket call that failed and why.
    public init(port: UInt16 = 0) throws {
        _ = Self.ignoreSIGPIPE
        let listener = try Socket.makeListener(port: port)
        self.port = listener.port
        state = ServerState(listener: listener.descriptor, port: listener.port)

        // The thread holds the state and router, never `self`, so dropping the server runs `deinit`.
        let thread = Thread { [state] in
            Self.acceptConnections(state: state, router: Self.router)
        }
        thread.name = "ErrandTestServer.accept.\(listener.port)"
        thread.start()
    }

    /// Stops accepting, then shuts down every open connection so blocked reads and sleeping
    /// handlers end now; clients see their connection closed. Safe to call more than once.
    public func stop() {
        guard state.stop() else { return }
        Socket.poke(port: port)
        state.waitForListenerClosed(timeout: 2)
    }

    deinit {
        stop()
    }

    // MARK: Internals

    private static let router = Router(routes: HTTPBinRoutes.all)

    /// A write to a connection the client has closed raises SIGPIPE, which kills the process by
    /// default; a test process would die whenever a client cancels mid-response.
    private static let ignoreSIGPIPE: Void = {
        _ = signal(SIGPIPE, SIG_IGN)
    }()

    private static func acceptConnections(state: ServerState, router: Router) {
        while !state.isStopped {
            guard let (descriptor, peerAddress) = Socket.accept(from: state.listener) else {
                let failure = errno
                if state.isStopped { break }
                // Out of descriptors or a transient error: back off briefly instead of spinning.
                if failure != EINTR && failure != ECONNABORTED { Thread.sleep(forTimeInterval: 0.01) }
                continue
            }
            guard state.register(connection: descriptor) else { break }
            let connection = HTTPConnection(
                descriptor: descriptor, peerAddress: peerAddress, server: state, router: router)
            let thread = Thread { connection.run() }
            thread.name = "ErrandTestServer.connection.\(descriptor)"
            thread.start()
        }
        state.closeListener()
    }
}
