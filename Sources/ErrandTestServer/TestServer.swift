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
/// `/patch`, `/delete`, `/anything[/…]` (form bodies, multipart included, echoed in `form`
/// and `files`), `/headers`, `/status/{codes}`, `/response-headers`,
/// `/basic-auth/{user}/{passwd}`, `/delay/{seconds}`, `/bytes/{n}`, `/range/{numbytes}`, `/json`.
///
/// Errand's own endpoints, **not part of httpbin**, for transfer, fault and request-pipeline tests:
/// - `GET /download/{numbytes}`: pseudo-random bytes that depend on the size and on
///   ``downloadVersion`` (compute them with ``downloadContent(size:version:range:)``), streamed
///   in 64 KiB chunks so any size costs the server kilobytes. Strong `ETag` `"v{version}-{n}"`,
///   `Last-Modified` (both change with the version), `Accept-Ranges: bytes`. Honours
///   `Range: bytes=N-`, `N-M` and `-S` (206 with `Content-Range`; 416 with `bytes */n` when
///   unsatisfiable) and `If-Range` (an ETag or date that is not current's gets 200 and the whole
///   body). Query: `drop_after=K` sends the head with the full `Content-Length`, then only K
///   body bytes, then closes the connection; `ignore_range=1` always answers 200 in full;
///   `rate=B` throttles to about B bytes a second (``stop()`` ends it promptly).
/// - `POST`/`PUT /upload`: reads the body (`Content-Length` or chunked) without keeping it and
///   answers `{"bytes": N, "checksum": "<16 hex digits of Checksum>", "content_type": …}`.
/// - `POST /auth/login` with a form or JSON body of non-empty `username` and `password` (and
///   optionally `expires_in`, seconds, default 3600): `{"access_token", "refresh_token",
///   "token_type": "Bearer", "expires_in"}`; 400 `{"error": "invalid_request", …}` without them.
/// - `GET`/`POST /auth/protected[/…]`: 200 `{"authenticated": true, "token", "path"}` for a
///   current `Authorization: Bearer` token (issued here, within its `expires_in`, and neither
///   expired by `/auth/expire` nor replaced by a refresh); otherwise 401 `{"error": "invalid_token"}` with
///   `WWW-Authenticate: Bearer error="invalid_token"`. `?delay_ms=N` (≤ 5000) checks the token
///   only after N ms, so that it can expire while the request is in flight.
/// - `GET /auth/protected-in-body`: the same check (the token may also be the `access_token`
///   query parameter), always 200: `{"response": {"authenticated": true, "token"}}`, or
///   `{"error": {"error_code": 5, "error_msg": "User authorization failed: …"}}`.
/// - `POST /auth/refresh` with a form or JSON `refresh_token`: a current one is used up, with the
///   access token issued alongside it, for new tokens (the login's shape and lifetime); else 401
///   `{"error": "invalid_grant"}`. `?delay_ms=N` (≤ 5000) answers after N ms (``stop()`` ends it).
/// - `POST /auth/expire` (``expireAccessTokens()``) invalidates every access token, `POST
///   /auth/revoke` (``revokeRefreshTokens()``) every refresh token: 204 both.
/// - `POST /session/login` (a form or JSON `username`, `password`, optional `expires_in`): `/auth/login`'s
///   tokens without the refresh token, which is set as the `session` cookie instead (30 days,
///   `HttpOnly`); `POST /session/token` with that cookie: a new access token (counted as a refresh),
///   else 401 `{"error": "invalid_session"}`.
/// - `GET /auth/stats`: `{"logins", "refreshes", "refresh_attempts", "protected_ok",
///   "protected_rejected"}` (``loginCount``, ``refreshCount``, ``refreshAttemptCount``).
/// - `GET /captcha/protected`: 200 `{"error": {"error_code": 14, "error_msg": "Captcha needed",
///   "captcha_sid", "captcha_img"}}` with a new sid each time, until `?captcha_sid=S&captcha_key=K`
///   answers an open captcha: 200 `{"response": {"passed": true}}`. The key is the sid reversed
///   (``captchaAnswer(sid:)``); each sid takes one answer.
/// - `GET`/`POST`/`PUT`/`DELETE /flaky/{key}?failures=K&status=C&retry_after=S`: the first K
///   calls for the key (default 1, counted per server, ``flakyCallCount(key:)``) answer C
///   (400–599, default 503) `{"error": "flaky", "call": n}` with `Retry-After: S` when given;
///   with `mode=drop` they close the connection without an answer. Later calls answer 200
///   `{"key", "call": n, "method"}`. A client may resend a request dropped on a reused
///   keep-alive connection by itself before reporting anything (FoundationNetworking does, and
///   on a fresh connection reports `badServerResponse`), so count calls with
///   ``flakyCallCount(key:)`` rather than assume one per attempt.
/// - `GET`/`HEAD /http-cache/{name}`: the ``CacheableResource`` set with
///   ``setCacheableResource(_:_:)`` (404 before), `304 Not Modified` for a matching
///   `If-None-Match` (weak comparison) or, without one, an `If-Modified-Since` equal to its
///   `Last-Modified`; ``cacheableAnswers(_:)`` counts the full and `304` answers.
/// - `POST`/`PUT`/`DELETE`/`PATCH /http-cache/{name}`: the request's `Answer-Status` (default
///   204), with its `Answer-Location` and `Answer-Content-Location` as `Location` and
///   `Content-Location`: an unsafe method's answer, for invalidation.
/// - `GET /api-error?code=C&message=M`: 200 `{"error": {"error_code": C, "error_msg": M}}`.
/// - `GET /fault/{kind}`: a broken or hostile answer. `reset`: a TCP reset before any byte;
///   `reset-mid-body`: a head announcing 1,000,000 bytes, 64 KiB of them, then a reset
///   (`pause_ms`, default 100, between the two); `truncated`: `Content-Length: 1000`, 500 bytes,
///   then close; `closed-when-idle`: a whole keep-alive answer, then close; `chunked-cut`: two chunks, then close before the last chunk; `endless-headers`:
///   a status line and one header, then silence (`trickle_ms=N`: another header every N ms;
///   `hold_s=S`: silence for S seconds, at most 600);
///   `garbage`: bytes that are not HTTP, then close; `bad-gzip`: `Content-Encoding: gzip` on a
///   body that is not gzip; `many-headers`: 10,000 header fields (`count=N`) and
///   `{"headers": N}`; `invalid-utf8`: a JSON body labelled UTF-8 with bytes that are not;
///   `deep-json`: 100,000 nested arrays (`depth=N`); `endless-body`: a chunked body that never
///   ends; `redirect-loop`: a 302 to itself (with `n=K`, to itself with `n=K+1` and the other
///   query items kept; with `mint=NAME` too, adding `NAME=minted-<K+1>`). Endless faults stop when the client hangs up, at
///   ``stop()``, or after 30 seconds. The Basic-auth 401 is httpbin's own `/basic-auth/{user}/{passwd}`.
/// - `GET /framing/{kind}`: a message framed in a way some clients cannot take. `trailers`: a
///   chunked JSON body, then trailer fields `X-Checksum` and `X-Trailer` (`status=C` for
///   another status); `head-cut`: a status line and `fields=N` header fields, then a close
///   before the head ends (`interim=1`: a `103 Early Hints` head first); `huge-content-length`:
///   `Content-Length: 9223372036854775807`, a short JSON body, then close; `no-reason`:
///   `HTTP/1.1 200` with no reason phrase; `interim`: an interim head for each of `codes`
///   (default `103`), each with a `Link` field, before the `200`. Bodies are `{"framing": "<kind>"}`.
/// - `/conformance/{name}`: the servers of the HTTP client conformance suite of Apple's
///   swift-http-api-proposal, each answer as the suite sends it. Malformed and edge answers, each
///   then a close: `not_http`, `http_case` (`Http/1.1 200 OK`), `no_reason`, `204_with_cl` and
///   `304_with_cl` (`Content-Length: 1000`, no body), `incomplete_body` (4 of 1000 bytes),
///   `no_length_hint`, `conflicting_cl` (`Content-Length: 10, 4`), `head_with_cl`. `request`: a
///   JSON description of the request (`params`, `headers`, `body`, `method`, and the chunked
///   body's `trailers`); `200`, `404`, `999`; `gzip`, `deflate`, `brotli` (`TEST\n` encoded when
///   `Accept-Encoding` names the coding) and `identity`; `header_multivalue` (`X-Test` twice);
///   `301` and `308` to `request`, `redirect_ping` and `redirect_pong` to each other; `1mb_body`;
///   `cookie` (`Set-Cookie: foo=<UUID>`); `etag` (a counter as `ETag` and body, `304` with
///   `Cached: true` to its own tag, which moves it on); `trailers` (a chunked body, then three
///   trailer fields); `stall` and `stall_body` (no answer, or a head and 1000 bytes, until the
///   client hangs up); `echo` (the body back, chunk for chunk, as it arrives) and `speak` (a
///   thousand one-byte chunks, each once more of the request body came, then the end of the
///   response while the request may go on).
/// - `POST`/`PUT /resumable/{name}`: a target that offers resumable uploads, the server side of
///   draft-ietf-httpbis-resumable-upload (interop version 8); bytes are counted and hashed, never
///   kept. With `Upload-Complete` (`?1` or `?0`) it creates an upload resource and, before it reads
///   the body, sends `104 Upload Resumption Supported` with `Location: /resumable/uploads/{id}`,
///   `Upload-Limit: max-size=1073741824` and `Upload-Draft-Interop-Version: 8` (none to a request
///   naming another interop version); each body byte is appended as it is read, and every further
///   16 MiB is told in a `104` with `Upload-Offset`. The length is recorded from `Upload-Length`
///   and `Upload-Complete: ?1` with `Content-Length` (disagreeing: `400`, problem type
///   `inconsistent-upload-length`, no resource; past the limit: `413`). Once the body has ended,
///   with `?1`: `200 {"name", "method", "size", "checksum": "<16 hex digits of Checksum>",
///   "uploadId"}` and `Upload-Complete: ?1`; with `?0`: `201` with `Location`, `Upload-Complete: ?0`,
///   `Upload-Offset`, `Upload-Limit`. Without a valid `Upload-Complete`, the same `200` body with
///   `"uploadId": null`, and no resource. Query, kept for the upload's life: `drop_at=N[,M…]`
///   resets the connection appending once the offset reaches each N (exactly N bytes appended),
///   once each; `no_104=1` sends no `104`. Other values of them: `400`.
/// - `HEAD`/`GET /resumable/uploads/{id}`: `204` with `Upload-Offset`, `Upload-Complete`,
///   `Upload-Length` once known, `Upload-Limit`, `Cache-Control: no-store`. `PATCH`: needs
///   `Content-Type: application/partial-upload` (else `415`), `Upload-Offset` and `Upload-Complete`
///   (else `400`); another offset than the upload's is `409` with `Upload-Offset`,
///   `Upload-Complete: ?0` and problem type `mismatching-upload-offset`; the body is appended as it
///   is read (past the length: `400` `inconsistent-upload-length`, and the upload deactivated:
///   `410` to everything but `DELETE` from then on). With `?1` it ends in the target's `200`, with
///   `?0` in `204`, `Upload-Offset`, `Upload-Complete: ?0`; an empty `?1` at a complete upload's
///   length replays the `200` (anything else appended to it: `400`). `DELETE`: `204`, and `404`
///   to every request after. A retrieval, append or cancellation first resets the connection of a
///   creation or append still reading for the same upload (the draft's concurrency rule). Unknown
///   ids: `404`. ``resumableUpload(named:)`` reports an upload's state and counts.
/// - `GET`/`POST /cookie-parser?NAME` and `/cookie-parser-result?NAME` (each also followed by `/…`):
///   the IETF http-state group's cookie parser tests, served as its harness (`testserver.py`)
///   served them, from the folder given as `cookieParserTests` (else 404). The first answers
///   `302` with each line of `NAME-test` as a header field, byte for byte, and a `Location` to the
///   second unless the file has one; the second compares the request's `Cookie` with the one
///   `NAME-expected` names and answers `PASS` or `FAIL` with both. An HTTP/1.0 answer each, ended
///   by closing the connection. Its tests name hosts (`home.example.org:8888`): use the server
///   as the client's HTTP proxy, as a request in absolute-form is routed by its path and query.
///
/// Streaming endpoints — Server-Sent Events, JSON lines, an OpenAI-style chat completion — are
/// listed with their controls in `TestServer+Stream.swift`.
///
/// Connections are kept alive, each is served on its own thread, and request bodies may be
/// sent with `Content-Length` or chunked. A request-target in absolute-form (`GET
/// http://any.host:8888/get HTTP/1.1`, what a client sends its HTTP proxy) is routed by its path
/// and query, so the server can be a client's proxy for any host name. Responses carry
/// `Content-Length` except where HTTP forbids a body (1xx, 204, 304), the `/fault/`, `/framing/`
/// and `/cookie-parser` answers, which write their own bytes, and the streaming endpoints, whose
/// bodies are chunked (unframed and ended by the close to an HTTP/1.0 client). Every request is
/// recorded (the last 1000) for ``receivedRequests(path:)``.
public final class TestServer: Sendable {
    /// The port the server listens on; the kernel's choice when `init` was given 0.
    public let port: UInt16

    /// The loopback address the server listens on, `127.0.0.1` unless `init` was given another.
    public let host: String

    /// `http://<host>:<port>`, without a trailing slash.
    public var baseURL: String {
        "http://\(host):\(port)"
    }

    let state: ServerState

    /// Binds `host`:`port` (0 picks a free port) and starts accepting connections at once. A second
    /// loopback address such as `127.0.0.2` gives tests a second origin on the same machine.
    /// `cookieParserTests` is the folder of the http-state parser tests (`NNNN-test` and
    /// `NNNN-expected` files) that `/cookie-parser` serves; without it that route answers 404.
    /// - Throws: ``TestServerError`` naming the socket call that failed and why.
    public init(host: String = "127.0.0.1", port: UInt16 = 0, cookieParserTests: URL? = nil) throws {
        _ = Self.ignoreSIGPIPE
        let listener = try Socket.makeListener(host: host, port: port)
        self.host = host
        self.port = listener.port
        state = ServerState(
            listener: listener.descriptor, host: host, port: listener.port, cookieParserTests: cookieParserTests)

        // The thread holds the state and router, never `self`, so dropping the server runs `deinit`.
        let thread = Thread { [state] in
            Self.acceptConnections(state: state, router: Self.router)
        }
        thread.name = "ErrandTestServer.accept.\(listener.port)"
        thread.start()
    }

    /// Stops accepting, then shuts down every open connection so blocked reads and sleeping
    /// handlers end now; clients see their connection closed, and later ones refused, for as
    /// long as the server object lives: its port is held, never handed to another socket.
    /// Safe to call more than once.
    public func stop() {
        guard state.stop() else { return }
        Socket.poke(host: host, port: port)
        state.waitForListenerClosed(timeout: 2)
    }

    deinit {
        stop()
    }

    /// The version of the content `/download` serves, 1 at first. Setting it changes the bytes,
    /// the `ETag` and `Last-Modified` at the same URL, as a file replaced on a real server would.
    public var downloadVersion: Int {
        get { state.downloadVersion }
        set { state.downloadVersion = newValue }
    }

    /// How many times `/auth/login` has handed out tokens.
    public var loginCount: Int {
        state.pipeline.authStats.logins
    }

    /// How many times `/auth/refresh` has handed out new tokens.
    public var refreshCount: Int {
        state.pipeline.authStats.refreshes
    }

    /// How many requests `/auth/refresh` has received, refused ones included; a slow refresh
    /// (`?delay_ms=`) counts from when it arrives.
    public var refreshAttemptCount: Int {
        state.pipeline.authStats.refreshAttempts
    }

    /// Invalidates every access token issued so far, as `POST /auth/expire` does: the next
    /// protected request gets 401 until the client refreshes or logs in again.
    public func expireAccessTokens() {
        state.pipeline.expireAccessTokens()
    }

    /// Invalidates every refresh token issued so far, as `POST /auth/revoke` does: the next
    /// refresh gets 401 `invalid_grant`.
    public func revokeRefreshTokens() {
        state.pipeline.revokeRefreshTokens()
    }

    /// How the last `/ws/echo?flood=…` went, once it knows: the bytes it had sent when the
    /// client first stopped reading (its writes blocked for a second), or `nil` when it sent the
    /// whole flood without ever blocking.
    public func webSocketFloodBlocked() async -> Int? {
        await state.webSocketFlood.wait()
    }

    /// The codes of the close frames WebSocket clients sent to `/ws/echo`, oldest first (`nil`
    /// for a frame without a code), once there are at least `count`.
    public func webSocketCloseCodes(count: Int) async -> [UInt16?] {
        await state.webSocketCloses.wait(forCount: count)
    }

    /// How many requests `/flaky/{key}` has received for `key`, failed ones included.
    public func flakyCallCount(key: String) -> Int {
        state.pipeline.flakyCallCount(key: key)
    }

    /// Makes `/http-cache/{name}` answer with `resource`, replacing what it answered before.
    public func setCacheableResource(_ name: String, _ resource: CacheableResource) {
        state.httpCache.set(resource, for: name)
    }

    /// How many full and `304 Not Modified` answers `/http-cache/{name}` has given.
    public func cacheableAnswers(_ name: String) -> (full: Int, notModified: Int) {
        let answers = state.httpCache.answers(name)
        return (answers.full, answers.notModified)
    }

    /// The `captcha_key` that solves the captcha `sid` of `/captcha/protected`: `sid` reversed.
    public static func captchaAnswer(sid: String) -> String {
        PipelineState.captchaAnswer(sid: sid)
    }

    /// The requests received whose path starts with `prefix`, oldest first (at most the last
    /// 1000 of all requests are kept), e.g. to check the `Range` a resumed download sent.
    public func receivedRequests(path prefix: String = "/") -> [RecordedRequest] {
        state.recordedRequests.filter { $0.path.hasPrefix(prefix) }
    }

    /// The bytes `range` of what `/download/{size}` serves at `version`, computed without a
    /// server, so a test can check a download of any size piece by piece. `range` is clamped
    /// to `0..<size`.
    public static func downloadContent(size: Int, version: Int, range: Range<Int>) -> Data {
        let range = range.clamped(to: 0..<max(size, 0))
        let seed = SplitMix64.value(
            seed: UInt64(bitPattern: Int64(version)), index: UInt64(bitPattern: Int64(size)))
        var data = Data(count: range.count)
        data.withUnsafeMutableBytes { (output: UnsafeMutableRawBufferPointer) in
            var offset = range.lowerBound
            while offset < range.upperBound {
                // Byte i is byte i % 8 of the generator's (i / 8)-th value, little-endian.
                let word = SplitMix64.value(seed: seed, index: UInt64(offset / 8)).littleEndian
                let skip = offset % 8
                let count = min(8 - skip, range.upperBound - offset)
                let start = offset - range.lowerBound
                if count == 8 {
                    output.storeBytes(of: word, toByteOffset: start, as: UInt64.self)
                } else {
                    // Plain loops: slices and closures per word are minutes of a sanitized debug run.
                    var index = 0
                    while index < count {
                        output[start + index] = UInt8(truncatingIfNeeded: word.littleEndian >> (8 * (skip + index)))
                        index += 1
                    }
                }
                offset += count
            }
        }
        return data
    }

    /// `size` bytes where byte `i` is `i * 31` modulo 256: what the WebSocket routes trickle and
    /// flood. Built by doubling copies of the first 256 bytes, because a map
    /// over millions of indexes takes minutes in a sanitized debug build.
    public static func repeatingPattern(size: Int) -> Data {
        var data = Data(count: max(size, 0))
        data.withUnsafeMutableBytes { (bytes: UnsafeMutableRawBufferPointer) in
            var filled = 0
            while filled < min(256, bytes.count) {
                bytes[filled] = UInt8(truncatingIfNeeded: filled &* 31)
                filled += 1
            }
            // The pattern repeats every 256 bytes, and `filled` stays a multiple of 256.
            while filled < bytes.count {
                let count = min(filled, bytes.count - filled)
                UnsafeMutableRawBufferPointer(rebasing: bytes[filled..<filled + count])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[0..<count]))
                filled += count
            }
        }
        return data
    }

    // MARK: Internals

    private static let router = Router(
        routes: HTTPBinRoutes.all + TransferRoutes.all + PipelineRoutes.all + SessionRoutes.all + ClientBehaviourRoutes.all
            + FaultRoutes.all + FramingFaultRoutes.all + ConformanceRoutes.all + ResumableUploadRoutes.all
            + LongPollRoutes.all + StreamRoutes.all
            + WebSocketRoutes.all
            + WebSocketFaultRoutes.all + HTTPCacheRoutes.all + CookieParserRoutes.all)

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
