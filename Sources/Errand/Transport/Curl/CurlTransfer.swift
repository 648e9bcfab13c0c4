import CErrandCurl
import Dispatch
import Foundation

/// One hop on an easy handle, owned by the curl thread: configures the handle and turns
/// libcurl's callbacks into the request's events.
final class CurlTransfer {
    /// A redirect this hop answered with, followed once the hop ends.
    struct Redirect {
        let statusCode: Int
        let location: String
        let setCookies: [String]
    }

    let hop: CurlHop
    let easy: UnsafeMutableRawPointer
    /// Where the hop's deliveries wait for the end of the loop's turn.
    private let drains: CurlDrainBatch
    let connection: CurlConnectionSettings
    /// The trusted roots' PEM bytes, owned by the curl loop, which outlives every transfer.
    let certificateBundle: UnsafeRawBufferPointer?
    let upload: CurlUploadBody?
    var headerList: UnsafeMutableRawPointer?
    var resolveList: UnsafeMutableRawPointer?
    /// Where libcurl writes what went wrong, in more detail than its result code says.
    let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(ERRAND_CURL_ERROR_SIZE))
    /// The Unix socket this hop connects to, for an `http+unix` URL.
    private let socketPath: String?
    private var head = CurlResponseHead()
    /// Bytes of the response's head so far, interim heads included.
    private var headBytes = 0
    /// For a body produced while it is sent, the response body's framing, read here: its end
    /// may come before the request body's, and libcurl would not end the transfer there.
    private var bodyFraming: CurlBodyFraming?
    /// The response ended, and was reported, before the request body did.
    private var hasEndedFirst = false
    private var isHeadDelivered = false
    /// Whether any byte of a response, head or body, arrived on this hop.
    private var hasResponseBytes = false
    private(set) var redirect: Redirect?
    /// When bytes last moved, for the idle timeout.
    private(set) var lastActivity = DispatchTime.now()
    /// Paused because the consumer is behind; the idle timeout does not run meanwhile.
    private(set) var isPausedForConsumer = false
    /// Paused because a streamed body has no bytes ready. Neither does the idle timeout run
    /// meanwhile: the wait is for the producer, not the network.
    private(set) var isPausedForBody = false
    /// Why a callback aborted the transfer — a body that could not be read, an answer that is not
    /// HTTP: libcurl reports only that a callback did, which would read as a cancel.
    private(set) var callbackFailure: ErrandError?

    /// Configures `easy` for `hop`, connecting as `connection` says.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when the body file cannot be opened;
    ///   ``ErrandError/transport(_:)`` when libcurl refuses a connection option.
    init(
        hop: CurlHop, easy: UnsafeMutableRawPointer, connection: CurlConnectionSettings,
        certificateBundle: UnsafeRawBufferPointer?, drains: CurlDrainBatch
    ) throws(ErrandError) {
        self.hop = hop
        self.easy = easy
        self.drains = drains
        self.connection = connection
        self.certificateBundle = certificateBundle
        errorBuffer.initialize(to: 0)
        let request = hop.request
        socketPath = UnixSocketURL(request.url)?.socketPath
        if let pump = hop.bodyPump {
            upload = CurlUploadBody(pump: pump)
        } else if let file = request.bodyFileURL {
            upload = try CurlUploadBody(fileURL: file, from: request.bodyFileOffset)
        } else if let body = request.body {
            upload = CurlUploadBody(data: body)
        } else {
            switch request.method.uppercased() {
            case "POST", "PUT", "PATCH": upload = CurlUploadBody(data: Data())
            default: upload = nil
            }
        }
        try configure()
    }

    deinit {
        if let headerList { errand_curl_slist_free_all(headerList) }
        if let resolveList { errand_curl_slist_free_all(resolveList) }
        errorBuffer.deallocate()
    }

    /// When the idle timeout or the deadline expires; `nil` for never.
    var expiry: DispatchTime? {
        let idle =
            isPausedForConsumer || isPausedForBody
            ? nil : lastActivity + CurlHop.timeout(hop.request.timeoutInterval)
        switch (idle, hop.deadline) {
        case (let idle?, let deadline?): return min(idle, deadline)
        case (let idle?, nil): return idle
        case (nil, let deadline): return deadline
        }
    }

    /// Notes that the consumer caught up after a pause; `false` when the transfer was not paused.
    /// The caller then unpauses the handle.
    func consumerCaughtUp() -> Bool {
        guard isPausedForConsumer else { return false }
        isPausedForConsumer = false
        lastActivity = .now()
        return true
    }

    /// Notes that a streamed body has bytes ready after a pause; `false` when sending was not
    /// paused. The caller then unpauses the handle.
    func bodyReady() -> Bool {
        guard isPausedForBody else { return false }
        isPausedForBody = false
        lastActivity = .now()
        return true
    }

    /// The directions still paused, as `curl_easy_pause` takes them.
    var pauseMask: Int32 {
        (isPausedForConsumer ? ERRAND_CURLPAUSE_RECV : 0) | (isPausedForBody ? ERRAND_CURLPAUSE_SEND : 0)
    }

    /// Timings and protocol of the hop, read before the handle is reused.
    func metrics() -> TransportMetrics {
        func seconds(_ info: Int32) -> TimeInterval {
            var microseconds: Int64 = 0
            _ = errand_curl_easy_getinfo_off(easy, info, &microseconds)
            return TimeInterval(microseconds) / 1e6
        }
        var version = 0
        _ = errand_curl_easy_getinfo_long(easy, ERRAND_CURLINFO_HTTP_VERSION, &version)
        return TransportMetrics(
            domainLookup: seconds(ERRAND_CURLINFO_NAMELOOKUP_TIME_T), connect: seconds(ERRAND_CURLINFO_CONNECT_TIME_T),
            secureConnection: seconds(ERRAND_CURLINFO_APPCONNECT_TIME_T),
            firstByte: seconds(ERRAND_CURLINFO_STARTTRANSFER_TIME_T), total: seconds(ERRAND_CURLINFO_TOTAL_TIME_T),
            httpVersion: Self.versionNames[Int32(truncatingIfNeeded: version)], redirectCount: hop.redirectCount,
            isReusedConnection: long(ERRAND_CURLINFO_NUM_CONNECTS) == 0, remoteAddress: remoteAddress())
    }

    /// Whether any of the request went out or any of the response came in: a transfer that
    /// libcurl holds back for a free connection has neither.
    var hasExchangedBytes: Bool {
        hasResponseBytes || long(ERRAND_CURLINFO_REQUEST_SIZE) > 0
    }

    /// Whether the hop, ended with `result`, may be sent once more on a new connection: an
    /// HTTP/2 connection failed (a GOAWAY, a reset) before any of the response arrived, and the
    /// method is idempotent, so sending it again is safe even if the server did act on it. libcurl
    /// replays a stream the server refused (REFUSED_STREAM) itself, whatever its method, for the
    /// server promises it did nothing; it cannot tell which streams a GOAWAY left unprocessed.
    func canReplay(after result: Int32) -> Bool {
        guard result == ERRAND_CURLE_HTTP2 || result == ERRAND_CURLE_HTTP2_STREAM, !hop.isReplay,
            !hasResponseBytes, upload?.isProduced != true
        else { return false }
        return Self.idempotentMethods.contains(hop.request.method.uppercased())
    }

    /// `CURLINFO_HTTP_VERSION`'s values as ``TransportMetrics/httpVersion`` names them.
    private static let versionNames = [
        ERRAND_CURL_HTTP_VERSION_1_0: "HTTP/1.0", ERRAND_CURL_HTTP_VERSION_1_1: "HTTP/1.1",
        ERRAND_CURL_HTTP_VERSION_2: "HTTP/2", ERRAND_CURL_HTTP_VERSION_3: "HTTP/3",
    ]

    private static let idempotentMethods: Set<String> = ["GET", "HEAD", "PUT", "DELETE", "OPTIONS", "TRACE"]

    /// The error this hop ended with, given libcurl's `result`; `nil` for success. It names what
    /// the result code cannot: the Unix socket, a proxy that wants credentials, the client identity.
    func failure(for result: Int32) -> ErrandError? {
        if let callbackFailure { return callbackFailure }
        guard result != ERRAND_CURLE_OK else { return nil }
        let url = hop.request.url
        let detail = errorBuffer.pointee == 0 ? CurlLibrary.describe(result) : String(cString: errorBuffer)
        func failure(_ code: URLError.Code, _ reason: String) -> ErrandError {
            .transport(
                URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: url, NSLocalizedDescriptionKey: reason]))
        }
        if let socketPath, result == ERRAND_CURLE_COULDNT_CONNECT {
            return failure(.cannotConnectToHost, "cannot connect to the Unix socket \(socketPath): \(detail)")
        }
        if long(ERRAND_CURLINFO_HTTP_CONNECTCODE) == 407 {
            return failure(
                .userAuthenticationRequired,
                "the proxy refused to open a tunnel to \(url.host ?? "") without valid credentials"
                    + " (407 Proxy Authentication Required); put them in ConnectionOptions.proxy's URL")
        }
        if let proxy = connection.proxy, !proxy.isEmpty,
            result == ERRAND_CURLE_COULDNT_CONNECT || result == ERRAND_CURLE_PROXY
        {
            return failure(.cannotConnectToHost, "the proxy in ConnectionOptions.proxy failed: \(detail)")
        }
        if connection.clientIdentity != nil,
            result == ERRAND_CURLE_SSL_CERTPROBLEM || result == ERRAND_CURLE_SSL_ENGINE_SETFAILED
        {
            return failure(.clientCertificateRejected, "ConnectionOptions.clientIdentity cannot be used: \(detail)")
        }
        return CurlErrorMapping.error(for: result, url: url, detail: detail)
    }

    private func long(_ info: Int32) -> Int {
        var value = 0
        _ = errand_curl_easy_getinfo_long(easy, info, &value)
        return value
    }

    private func remoteAddress() -> String? {
        var address: UnsafePointer<CChar>?
        guard errand_curl_easy_getinfo_string(easy, ERRAND_CURLINFO_PRIMARY_IP, &address) == ERRAND_CURLE_OK,
            let address, address.pointee != 0
        else { return nil }
        return String(cString: address)
    }

    /// Bytes libcurl reads at once, and so the largest body chunk.
    static let receiveBufferSize = 64 * 1024

    // MARK: Callbacks, on the curl thread

    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Int {
        hasResponseBytes = true
        // Everything of a redirect is not the caller's.
        guard redirect == nil else {
            lastActivity = .now()
            return line.count
        }
        guard !isHeadDelivered else {
            lastActivity = .now()
            guard head.takeTrailer(line) else {
                return abort(with: "its trailer fields are longer than \(CurlResponseHead.trailerLimit >> 10) KiB")
            }
            return line.count
        }
        headBytes += line.count
        guard headBytes <= HandshakeAnswerReader.headLimit else {
            return abort(
                with: "its head, interim heads included, is longer than \(HandshakeAnswerReader.headLimit >> 10) KiB")
        }
        // Until its head is complete a response has shown no progress: a server trickling header
        // lines forever must still meet the idle timeout, as under URLSession on Linux.
        switch head.take(line) {
        case .incomplete: return line.count
        case .interim:
            hop.mailbox.post(.interimHead(statusCode: head.statusCode, headers: head.headers), batch: drains)
            return line.count
        case .notHTTP(let text): return abort(with: "it does not begin with an HTTP status line but with \"\(text)\"")
        case .complete: break
        }
        lastActivity = .now()
        let setCookies = head.values(of: "Set-Cookie")
        if RedirectPolicy.isRedirect(head.statusCode), let location = head.values(of: "Location").first {
            redirect = Redirect(statusCode: head.statusCode, location: location, setCookies: setCookies)
            return line.count
        }
        isHeadDelivered = true
        // A coding libcurl cannot decode (`Content-Encoding: foo`) would fail with error 61: the
        // body goes out as it came, as browsers hand it over. libcurl reads this as the body arrives.
        if head.isEncoded(outside: CurlLibrary.decodedContentCodings) {
            setLong(ERRAND_CURLOPT_HTTP_CONTENT_DECODING, 0)
        }
        if !setCookies.isEmpty, let jar = hop.request.cookieJar {
            hop.mailbox.perform(batch: drains) { [url = hop.request.url] in
                jar.storeCookies(fromSetCookieFields: setCookies, for: url)
            }
        }
        hop.mailbox.post(.responseHead(statusCode: head.statusCode, headers: head.headers), batch: drains)
        if hop.bodyPump != nil {
            let framing = CurlBodyFraming(
                statusCode: head.statusCode, head: head, method: hop.request.method.uppercased())
            bodyFraming = framing
            if framing.hasNoBody { endBeforeTheRequestBody() }
        }
        return line.count
    }

    /// Reports the response whole while the request body may still be going out: the consumer
    /// that waits for the response's end to end the request body would otherwise wait forever.
    /// Closing the mailbox stops the body's producer; the transfer then ends as libcurl reads that.
    private func endBeforeTheRequestBody() {
        hasEndedFirst = true
        for line in bodyFraming?.trailerLines ?? [] {
            _ = (line + [0x0D, 0x0A]).withUnsafeBytes { head.takeTrailer($0) }
        }
        if !head.trailers.isEmpty { hop.mailbox.post(.trailers(head.trailers), batch: drains) }
        hop.mailbox.post(.metrics(metrics()), batch: drains)
        hop.mailbox.close(with: nil, batch: drains)
    }

    /// Fails the transfer as a bad server response, saying why; what the header callback then returns.
    private func abort(with reason: String) -> Int {
        callbackFailure = .transport(
            URLError(
                .badServerResponse,
                userInfo: [
                    NSURLErrorFailingURLErrorKey: hop.request.url,
                    NSLocalizedDescriptionKey: "the server's answer is not valid HTTP: \(reason)",
                ]))
        return 0
    }

    /// The trailer fields that followed the body; empty when none came.
    var trailers: [String: String] { head.trailers }

    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        hasResponseBytes = true
        lastActivity = .now()
        guard redirect == nil else { return bytes.count }
        if var framing = bodyFraming {
            // What follows a body that ended is not the caller's.
            guard !hasEndedFirst else { return bytes.count }
            var taken = CurlBodyFraming.Taken()
            let accepted = hop.mailbox.postBody(batch: drains) {
                taken = framing.take(bytes)
                return taken.pieces
            }
            bodyFraming = framing
            guard accepted else {
                isPausedForConsumer = true
                return Int(ERRAND_CURL_WRITEFUNC_PAUSE)
            }
            if taken.isMalformed { return abort(with: "its chunked body is malformed") }
            if taken.hasEnded { endBeforeTheRequestBody() }
            return bytes.count
        }
        guard hop.mailbox.postBody(bytes, batch: drains) else {
            isPausedForConsumer = true
            return Int(ERRAND_CURL_WRITEFUNC_PAUSE)
        }
        return bytes.count
    }

    func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        lastActivity = .now()
        guard let upload else { return Int(ERRAND_CURL_READFUNC_ABORT) }
        let ready: Int?
        do throws(ErrandError) {
            ready = try upload.read(into: buffer)
        } catch {
            callbackFailure = error
            return Int(ERRAND_CURL_READFUNC_ABORT)
        }
        guard let count = ready else {
            // Returning nothing would end the body: libcurl pauses sending until the pump wakes it.
            isPausedForBody = true
            return Int(ERRAND_CURL_READFUNC_PAUSE)
        }
        if count > 0 {
            hop.mailbox.post(.uploadProgress(bytesSent: upload.offset, totalBytes: upload.size), batch: drains)
        } else if upload.size == nil {
            // A body of unknown length has one now.
            hop.mailbox.post(.uploadProgress(bytesSent: upload.offset, totalBytes: upload.offset), batch: drains)
        }
        return count
    }

    func rewindBody(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, let upload, upload.seek(to: offset) else {
            // libcurl rewinds to resend on a new connection, and would report only that it could not.
            if upload?.isProduced == true {
                let reason = "the connection closed while the streamed body was being sent, which cannot be sent again"
                callbackFailure = .transport(
                    URLError(
                        .networkConnectionLost,
                        userInfo: [NSURLErrorFailingURLErrorKey: hop.request.url, NSLocalizedDescriptionKey: reason]))
            }
            return ERRAND_CURL_SEEKFUNC_CANTSEEK
        }
        return ERRAND_CURL_SEEKFUNC_OK
    }
}
