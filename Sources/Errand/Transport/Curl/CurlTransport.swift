import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``Transport`` that drives libcurl directly: the default on Linux, several times faster
/// than URLSession there, and without its gaps.
///
/// One libcurl multi handle runs every request of the transport on one thread, reusing
/// keep-alive connections (and HTTP/2 where an `https` server offers it). It adds what
/// URLSession on Linux lacks:
/// - Flow control: when the consumer of a response falls behind by ``bufferLimit`` bytes, the
///   transfer pauses, so a large download stays bounded in memory.
/// - Streamed request bodies (``TransportRequest/bodyStream``): chunked when their length is
///   unknown, read at most 256 KiB ahead of the connection, and the transfer pauses — never
///   blocks its thread — while the producer has nothing ready.
/// - `timeoutInterval` as an idle timeout and `timeoutIntervalForResource` as a deadline for
///   the whole request, redirects included.
/// - Redirects followed by Errand: 307 and 308 keep the method and body; `Authorization`,
///   `Cookie`, `Proxy-Authorization` and the ``TransportRequest/credentialHeaders`` are dropped
///   when a redirect leaves the origin; HTTPS to HTTP is refused with
///   ``ErrandError/redirectRefused(_:)``.
/// - A ``TransportEvent/metrics(_:)`` event with the timings and HTTP version before completion.
///
/// libcurl is loaded at run time (`libcurl.so.4`, which every Linux machine that runs Swift
/// has, because FoundationNetworking links it); check ``isAvailable``. When it is missing, every
/// request fails with `URLError(.unsupportedURL)`, and ``NetworkAgent`` uses
/// ``URLSessionTransport`` instead.
///
/// How it connects is ``connection``: HTTP/2 by ALPN over TLS (concurrent requests to one host
/// share one connection), HTTP/1.1 only, or h2c; a proxy (by default the environment's
/// `https_proxy`, `http_proxy`, `no_proxy`, as with the `curl` command); the certificate
/// authorities it trusts; a client certificate; host overrides; and `http+unix://` URLs, which
/// reach a server on a Unix domain socket. TLS is always verified, and also against public keys
/// pinned per host when ``serverTrust`` names any. Loading libcurl sets `SIGPIPE` to be ignored
/// for the process: a write to a closed connection must fail, not end it.
public final class CurlTransport: DirectDeliveryTransport {
    /// Whether libcurl could be loaded on this machine. Checked once.
    public static var isAvailable: Bool { CurlLibrary.isLoaded }

    /// Body bytes a request may hand its consumer ahead of consumption before its transfer pauses.
    /// Default 1 MiB.
    public let bufferLimit: Int

    private let driver: CurlDriver?
    private let additionalHeaders: [String: String]
    private let settings: CurlConnectionSettings
    private let peakBuffered = Locked(0)
    private let peakUploadBuffered = Locked(0)
    /// How the transport connects to servers. Default: ``ConnectionOptions/init()``.
    public let connection: ConnectionOptions
    /// The public keys pinned per host. Default ``ServerTrust/system``: none.
    public let serverTrust: ServerTrust

    /// Creates a transport.
    ///
    /// The files `connection` names (trusted roots, client identity) are read here; one that is
    /// missing or not PEM fails every request of the transport with an error naming it.
    /// - Parameters:
    ///   - configuration: The header fields added to every request
    ///     (`httpAdditionalHeaders`) and the connections kept per host
    ///     (`httpMaximumConnectionsPerHost`, unless `connection` sets its own). Default `.default`.
    ///   - connection: How to reach servers; see ``ConnectionOptions``. Default: every option's default.
    ///   - bufferLimit: See ``bufferLimit``. Default 1 MiB.
    ///   - serverTrust: Public keys pinned per host, on top of the system's validation. Default
    ///     ``ServerTrust/system``: none.
    public convenience init(
        configuration: URLSessionConfiguration = .default, connection: ConnectionOptions = .init(),
        bufferLimit: Int = 1 << 20, serverTrust: ServerTrust = .system
    ) {
        self.init(
            configuration: configuration, connection: connection, bufferLimit: bufferLimit, serverTrust: serverTrust,
            calls: .libcurl)
    }

    /// A transport whose failure-prone libcurl calls are `calls`, for tests; `watchesSockets:
    /// false` runs the loop of platforms without epoll.
    init(
        configuration: URLSessionConfiguration, connection: ConnectionOptions = .init(), bufferLimit: Int,
        serverTrust: ServerTrust = .system, calls: CurlCalls, watchesSockets: Bool = true
    ) {
        self.connection = connection
        self.serverTrust = serverTrust
        self.bufferLimit = max(bufferLimit, 1)
        var headers: [String: String] = [:]
        for (name, value) in configuration.httpAdditionalHeaders ?? [:] {
            headers[String(describing: name)] = String(describing: value)
        }
        additionalHeaders = headers
        let settings = CurlConnectionSettings(
            connection: connection, sessionLimit: configuration.httpMaximumConnectionsPerHost,
            libraryVersion: CurlLibrary.versionNumber)
        self.settings = settings
        driver = CurlDriver(connection: settings, calls: calls, watchesSockets: watchesSockets)
    }

    deinit {
        // The thread ends once the requests still in flight have completed.
        driver?.submit(.shutdown)
    }

    /// Starts `request`; see ``Transport/send(_:events:)``. Returns at once.
    public func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
        -> any TransportTask
    {
        send(request, deliversDirectly: false, events: events)
    }

    /// Starts `request`; `deliversDirectly` lets the curl thread run `events` for what it received
    /// in one turn, unless that includes work that must not run there (cookies, a redirect).
    func send(
        _ request: TransportRequest, deliversDirectly: Bool, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportTask {
        if request.upgradesToWebSocket { return openSocket(request, events: events) }
        let id = driver?.makeID() ?? 0
        let pump = request.bodyStream.map { body in
            BodyStreamPump(body: body, url: request.url) { [driver] in driver?.submit(.resumeSending(id: id)) }
        }
        let task = makeTask(id: id, directDelivery: deliversDirectly ? .events : .none, pump: pump, events: events)
        guard let driver = ready(for: request, task) else { return task }
        if let pump, !pump.start() {
            task.mailbox.close(with: BodyStream.alreadySent(to: request.url))
            return task
        }
        var request = request
        for (name, value) in additionalHeaders where request.headers.headerField(name) == nil {
            request.headers[name] = value
        }
        let deadline = request.timeoutIntervalForResource.map { DispatchTime.now() + CurlHop.timeout($0) }
        driver.submit(
            .start(
                CurlHop(
                    id: id, request: request, cookieHeader: request.jarCookieHeader, mailbox: task.mailbox,
                    deadline: deadline, serverTrust: serverTrust, bodyPump: pump)))
        return task
    }

    /// Opens a connection for a WebSocket to `request`'s URL (`ws` and `wss` as `http` and
    /// `https`) with its connection settings, and writes `request` on it as an HTTP/1.1 head.
    /// `events` get the answer's head, then its body: after a `101`, every byte the peer sends,
    /// until `.completed` (`nil` when the peer closed the connection). ``CurlTask/write(_:completion:)``
    /// sends; `cancel()` drops the connection. `timeoutInterval` bounds the handshake only.
    func openSocket(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> CurlTask {
        // The pipeline only hands a socket's bytes to its reader, which decodes them: the curl thread
        // delivers them itself, and a lone message wakes one thread, its consumer's.
        let task = makeTask(id: driver?.makeID() ?? 0, directDelivery: .bodies, pump: nil, events: events)
        var request = request
        request.url = WebSocketURL.http(request.url)
        for (name, value) in additionalHeaders where request.headers.headerField(name) == nil {
            request.headers[name] = value
        }
        guard let driver = ready(for: request, task) else { return task }
        let head = CurlSocket.head(of: request, cookieHeader: request.jarCookieHeader)
        let deadline = DispatchTime.now() + CurlHop.timeout(request.timeoutInterval)
        driver.submit(
            .openSocket(
                CurlSocket.Opening(
                    id: task.id, request: request, head: head, mailbox: task.mailbox, handshakeDeadline: deadline)))
        return task
    }

    /// A task whose events go through a new mailbox, counted in flight until it closes.
    private func makeTask(
        id: Int, directDelivery: CurlEventMailbox.DirectDelivery, pump: BodyStreamPump?,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> CurlTask {
        driver?.requestStarted()
        let mailbox = CurlEventMailbox(
            pauseThreshold: bufferLimit, directDelivery: directDelivery, events: events,
            resume: { [driver] in driver?.submit(.resume(id: id)) },
            closed: { [driver, peakBuffered, peakUploadBuffered] highWaterMark in
                peakBuffered.withLock { $0 = max($0, highWaterMark) }
                if let pump {
                    // Done, failed or cancelled: the producer need not go on.
                    pump.stop()
                    peakUploadBuffered.withLock { $0 = max($0, pump.highWaterMark) }
                }
                driver?.requestEnded()
            })
        return CurlTask(id: id, mailbox: mailbox, driver: driver)
    }

    /// The driver to submit `request` to; `nil`, with `task` closed saying why, when libcurl is
    /// missing, the scheme is not HTTP's, the settings failed, or a pinned host cannot be checked.
    private func ready(for request: TransportRequest, _ task: CurlTask) -> CurlDriver? {
        guard let driver else {
            let reason = "libcurl could not be loaded"
            task.mailbox.close(
                with: .transport(
                    URLError(
                        .unsupportedURL,
                        userInfo: [NSURLErrorFailingURLErrorKey: request.url, NSLocalizedDescriptionKey: reason])))
            return nil
        }
        // libcurl speaks many protocols; an HTTP client must not open `file:` or `ftp:` URLs.
        guard let scheme = request.url.scheme?.lowercased(),
            ["http", "https"].contains(scheme) || UnixSocketURL(request.url) != nil
        else {
            task.mailbox.close(
                with: .transport(URLError(.unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: request.url])))
            return nil
        }
        if let failure = settings.failure {
            task.mailbox.close(with: failure.naming(request.url))
            return nil
        }
        if let refusal = serverTrust.refusal(of: request.url, canCheckPins: true) {
            task.mailbox.close(with: refusal)
            return nil
        }
        return driver
    }

    /// The most body bytes any finished request of this transport held for its consumer at once:
    /// flow control keeps it near ``bufferLimit`` however large the body and slow the consumer.
    var peakBufferedBytes: Int { peakBuffered[\.self] }

    /// The most bytes of a streamed request body any finished request of this transport read
    /// ahead of sending: its pump keeps it near ``BodyStreamPump/defaultLimit`` however long the body.
    var peakUploadBufferedBytes: Int { peakUploadBuffered[\.self] }
}
