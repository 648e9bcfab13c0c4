import Foundation

/// Turns one exchange — the request as sent, the response or error it got, its metrics — into a
/// HAR entry, masking what the ``Redaction`` names before any text is made, so a masked value
/// never reaches the entry, in plain or base64 text.
package struct HAREntryBuilder: Sendable {
    let redaction: Redaction
    /// Bytes of a body recorded; beyond, the body is truncated, saying so.
    let maximumBodySize: Int

    /// How a truncated body's comment starts; a replay reads it to compare only what was kept.
    static let truncationNote = "Truncated from"

    /// A request body as it was when the request went out.
    struct SentBody: Sendable {
        /// The bytes recorded: all of an in-memory body, up to the maximum of a file's.
        var bytes = Data()
        /// The body's full size; `-1` when unknown.
        var size = 0
        /// Why the body is not (all) there, for the entry's comment.
        var note: String?
    }

    /// The size of the file at `url`; `-1` when it cannot be known.
    static func fileSize(_ url: URL) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? -1
    }

    /// The request's body, read now: a body file may be gone once the transport has sent it.
    func sentBody(of request: TransportRequest) -> SentBody {
        if let body = request.body { return SentBody(bytes: body, size: body.count) }
        if let stream = request.bodyStream {
            return SentBody(
                size: stream.length.map { Int(clamping: $0) } ?? -1,
                note: "The body was streamed (BodyStream) as it was sent, so it was not recorded.")
        }
        guard let file = request.bodyFileURL else { return SentBody() }
        let size = max(-1, Self.fileSize(file) - Int(clamping: request.bodyFileOffset))
        do {
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            try handle.seek(toOffset: UInt64(max(0, request.bodyFileOffset)))
            let bytes = try handle.read(upToCount: max(maximumBodySize, 0) + 1) ?? Data()
            return SentBody(bytes: bytes, size: max(size, bytes.count))
        } catch {
            return SentBody(size: size, note: "The body file \(file.lastPathComponent) could not be read: \(error).")
        }
    }

    func entry(_ exchange: Exchange) -> HTTPArchive.Entry {
        let request = exchange.request
        let httpVersion = exchange.metrics?.httpVersion ?? "HTTP/1.1"
        let timings = HTTPArchive.Timings(
            metrics: exchange.metrics, sentAt: exchange.sentAt, headAt: exchange.headAt,
            finishedAt: exchange.finishedAt)
        var comments: [String] = []
        if exchange.attemptCount > 1 {
            comments.append("Attempt \(exchange.attemptCount): earlier attempts of the task failed and were retried.")
        }
        if let redirects = exchange.metrics?.redirectCount, redirects > 0 {
            comments.append("\(redirects) redirect(s) followed: the response is the last one's.")
        }
        // The request's masked values, looked for everywhere else: a server may echo them.
        var secrets = requestSecrets(request)
        // URLs the request never held — a redirect's later hops, quoted in an error or a header —
        // are masked too, and what they held looked for everywhere else as well.
        let failure = exchange.error.map { redaction.maskingURLs(in: "\($0)", masked: &secrets) }
        let response = exchange.response.map { maskingURLs(in: $0, masked: &secrets) }
        var archivedRequest = archived(request, body: exchange.body, httpVersion: httpVersion, secrets: &secrets)
        let messages =
            exchange.request.upgradesToWebSocket ? archived(exchange.socketMessages, secrets: &secrets) : nil
        if exchange.droppedSocketMessages > 0 {
            comments.append(
                "\(exchange.droppedSocketMessages) later WebSocket message(s) not recorded: past \(maximumBodySize) bytes."
            )
        }
        let scrubber = HARScrubber(secrets)
        archivedRequest = Self.scrubbed(archivedRequest, by: scrubber)
        if let failure {
            comments.append("Failed: \(scrubber.text(failure)).")
        }
        return HTTPArchive.Entry(
            startedDateTime: exchange.startedAt.formatted(Self.dateStyle),
            time: [timings.dns, timings.connect, timings.send, timings.wait, timings.receive]
                .compactMap { $0 }.filter { $0 >= 0 }.reduce(0, +),
            request: archivedRequest,
            response: archived(
                response,
                size: exchange.responseBodySize
                    ?? exchange.response.flatMap { $0.fileURL == nil ? $0.data.count : nil },
                isPartial: (exchange.responseBodySize ?? 0) > (exchange.response?.data.count ?? 0),
                httpVersion: httpVersion,
                scrubber: scrubber),
            cache: HTTPArchive.Cache(),
            timings: timings,
            serverIPAddress: exchange.metrics?.remoteAddress,
            comment: comments.isEmpty ? nil : comments.joined(separator: " "),
            _webSocketMessages: messages)
    }

    // MARK: Request and response

    /// `response` with the URLs in its header fields and text body masked (see
    /// ``Redaction/maskingURLs(in:masked:)``), the values taken out added to `secrets`.
    private func maskingURLs(in response: Response, masked secrets: inout [String]) -> Response {
        func maskingURLs(in fields: [String: String]) -> [String: String] {
            var fields = fields
            for (name, value) in fields where !redaction.masksHeader(name) {
                let masked = redaction.maskingURLs(in: value, masked: &secrets)
                if masked != value { fields[name] = masked }
            }
            return fields
        }
        let headers = maskingURLs(in: response.headers)
        let trailers = maskingURLs(in: response.trailers)
        var data = response.data
        // Only text can quote a URL; a body of another kind is scrubbed as bytes.
        let mimeType = (response.value(forHeader: "Content-Type") ?? "").lowercased()
        if Self.isTextual(mimeType), data.range(of: Data("://".utf8)) != nil,
            let text = String(data: data, encoding: .utf8)
        {
            let masked = redaction.maskingURLs(in: text, masked: &secrets)
            if masked != text { data = Data(masked.utf8) }
        }
        return Response(
            statusCode: response.statusCode, headers: headers, data: data, isDataFromCache: response.isDataFromCache,
            isStale: response.isStale, fileURL: response.fileURL, trailers: trailers)
    }

    /// `request` with every value of the exchange's masked found in its text replaced: the
    /// credentials of a URL's user information may be in its path, a redirect's token in a header.
    /// A base64 body was scrubbed as bytes before it was encoded.
    private static func scrubbed(_ request: HTTPArchive.Request, by scrubber: HARScrubber) -> HTTPArchive.Request {
        guard !scrubber.secrets.isEmpty else { return request }
        var request = request
        let scrub: (HTTPArchive.NameValue) -> HTTPArchive.NameValue = {
            HTTPArchive.NameValue(name: $0.name, value: scrubber.text($0.value), comment: $0.comment)
        }
        request.url = scrubber.text(request.url)
        request.headers = request.headers.map(scrub)
        request.queryString = request.queryString.map(scrub)
        request.cookies = request.cookies.map { cookie in
            var cookie = cookie
            cookie.value = scrubber.text(cookie.value)
            return cookie
        }
        if var postData = request.postData {
            if postData.encoding == nil { postData.text = postData.text.map(scrubber.text) }
            postData.params = postData.params?.map { param in
                var param = param
                param.value = param.value.map(scrubber.text)
                return param
            }
            request.postData = postData
        }
        return request
    }

    private func archived(
        _ request: TransportRequest, body: SentBody, httpVersion: String, secrets: inout [String]
    ) -> HTTPArchive.Request {
        let mimeType = request.value(forHeader: "Content-Type") ?? ""
        var postData: HTTPArchive.PostData?
        if request.body != nil || request.bodyFileURL != nil || request.bodyStream != nil {
            let recorded = recordedBody(
                body.bytes, size: body.size, isPartial: body.size > body.bytes.count, mimeType: mimeType,
                secrets: &secrets)
            let params =
                mimeType.lowercased().contains("x-www-form-urlencoded") && recorded.encoding == nil
                ? recorded.text.map {
                    redaction.formPairs($0, names: redaction.bodyFieldNames).map {
                        HTTPArchive.Param(name: $0.name, value: $0.value)
                    }
                }
                : nil
            postData = HTTPArchive.PostData(
                mimeType: mimeType, text: recorded.text, params: params, encoding: recorded.encoding,
                comment: Self.joined(body.note, recorded.comment))
        }
        return HTTPArchive.Request(
            method: request.method, url: redaction.url(request.url), httpVersion: httpVersion,
            cookies: HTTPArchive.Cookie.cookies(
                ofCookieField: request.value(forHeader: "Cookie"), masked: redaction.masksHeader("Cookie")),
            headers: archived(request.headers, masking: { masks($0, of: request) }),
            queryString: redaction.queryPairs(of: request.url).map(Self.pair),
            postData: postData, headersSize: -1, bodySize: body.size)
    }

    /// The response, its body `size` bytes as received (`isPartial` when `response.data` holds
    /// only its start), or one with status `0` when none arrived, as browsers record a failure.
    private func archived(
        _ response: Response?, size: Int?, isPartial: Bool, httpVersion: String, scrubber: HARScrubber
    ) -> HTTPArchive.Response {
        guard let response else {
            return HTTPArchive.Response(
                status: 0, statusText: "", httpVersion: "", cookies: [], headers: [],
                content: HTTPArchive.Content(size: 0, mimeType: ""), redirectURL: "", headersSize: -1, bodySize: -1,
                comment: "No response arrived.")
        }
        let mimeType = response.value(forHeader: "Content-Type") ?? ""
        let content: HTTPArchive.Content
        let bodySize: Int
        if let file = response.fileURL {
            // A download may be gigabytes, and it is the caller's file: its size is what matters here.
            bodySize = size ?? Self.fileSize(file)
            content = HTTPArchive.Content(
                size: bodySize, mimeType: mimeType,
                comment: "Downloaded to a file; the body was not recorded.")
        } else {
            bodySize = size ?? response.data.count
            var secrets = scrubber.secrets
            let recorded = recordedBody(
                response.data, size: bodySize, isPartial: isPartial, mimeType: mimeType, secrets: &secrets)
            content = HTTPArchive.Content(
                size: bodySize, mimeType: mimeType, text: recorded.text, encoding: recorded.encoding,
                comment: recorded.comment)
        }
        let location = response.value(forHeader: "Location").map { scrubber.text(redaction.url(string: $0)) }
        return HTTPArchive.Response(
            status: response.statusCode, statusText: Self.reasonPhrase(response.statusCode), httpVersion: httpVersion,
            cookies: HTTPArchive.Cookie.cookies(
                ofSetCookieField: response.value(forHeader: "Set-Cookie"),
                masked: redaction.masksHeader("Set-Cookie")),
            headers: archived(response.headers).map { .init(name: $0.name, value: scrubber.text($0.value)) },
            content: content, redirectURL: location ?? "", headersSize: -1, bodySize: bodySize,
            trailers: response.trailers.isEmpty
                ? nil : archived(response.trailers).map { .init(name: $0.name, value: scrubber.text($0.value)) })
    }

    /// Header fields sorted by name, masked values replaced; URLs in the others (a `Location`,
    /// a `Referer`, a `Link`) masked as URLs are.
    private func archived(_ headers: [String: String], masking masks: (String) -> Bool = { _ in false })
        -> [HTTPArchive.NameValue]
    {
        headers.sorted { $0.key.lowercased() < $1.key.lowercased() }.map { name, value in
            var ignored: [String] = []
            let shown =
                redaction.masksHeader(name) || masks(name)
                ? Redaction.placeholder : redaction.maskingURLs(in: value, masked: &ignored)
            return HTTPArchive.NameValue(name: name, value: shown)
        }
    }

    // MARK: Bodies

    private struct RecordedBody {
        var text: String?
        var encoding: String?
        var comment: String?
    }

    /// Masks, then truncates, then encodes: masking first, so what is cut or base64-encoded is
    /// already masked. `bytes` are the body as received, `isPartial` when they are only its start
    /// (a file read up to the maximum, a recording's cut): whether the body is cut is decided on
    /// them, not on the masked bytes, which masking made shorter or longer.
    private func recordedBody(
        _ bytes: Data, size: Int, isPartial: Bool, mimeType: String, secrets: inout [String]
    ) -> RecordedBody {
        guard !bytes.isEmpty else { return RecordedBody(text: size == 0 ? "" : nil) }
        guard let fieldsMasked = redaction.body(bytes, mimeType: mimeType, masked: &secrets) else {
            return RecordedBody(comment: "Not recorded: JSON that could not be parsed to mask its fields.")
        }
        // Also the values masked elsewhere (a header's, the query's), and this body's own found just now.
        let masked = HARScrubber(secrets).data(fieldsMasked)
        let fullSize = max(size, bytes.count)
        let limit = max(maximumBodySize, 0)
        // The size as received: URL masking may have made a response's bytes shorter or longer.
        let isCut = isPartial || (size >= 0 ? size : bytes.count) > limit
        var kept = isCut && masked.count > limit ? masked.prefix(limit) : masked
        let comment = isCut ? "\(Self.truncationNote) \(fullSize) bytes." : nil
        if Self.isTextual(mimeType) || (!kept.isEmpty && Self.isJSON(masked)) {
            // A cut may split a UTF-8 sequence, whose lead byte is at most three bytes back.
            for _ in 0..<4 {
                if let text = String(data: kept, encoding: .utf8) { return RecordedBody(text: text, comment: comment) }
                guard comment != nil, !kept.isEmpty else { break }
                kept = kept.dropLast()
            }
            kept = isCut && masked.count > limit ? masked.prefix(limit) : masked
        }
        return RecordedBody(text: kept.base64EncodedString(), encoding: "base64", comment: comment)
    }

    private static func isTextual(_ mimeType: String) -> Bool {
        let type = mimeType.lowercased()
        return type.hasPrefix("text/")
            || ["json", "xml", "javascript", "ecmascript", "x-www-form-urlencoded", "graphql"].contains {
                type.contains($0)
            }
    }

    private static func isJSON(_ data: Data) -> Bool {
        (try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])) != nil
    }

    // MARK: Helpers

    /// ISO 8601 with milliseconds and the time zone, as HAR asks.
    private static let dateStyle = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    private static func pair(_ pair: (name: String, value: String)) -> HTTPArchive.NameValue {
        HTTPArchive.NameValue(name: pair.name, value: pair.value)
    }

    private static func joined(_ notes: String?...) -> String? {
        let present = notes.compactMap { $0 }
        return present.isEmpty ? nil : present.joined(separator: " ")
    }

    /// The values the request's masked header fields, cookies, query items and user information
    /// hold, and those of URLs quoted in its other header fields.
    /// Whether the request's header field `name` is masked: the redaction names it, or the
    /// request marks it as a credential (an `Authenticator` applied it, whatever its name).
    private func masks(_ name: String, of request: TransportRequest) -> Bool {
        redaction.masksHeader(name) || request.credentialHeaders.contains { $0.equalsIgnoringASCIICase(name) }
    }

    private func requestSecrets(_ request: TransportRequest) -> [String] {
        var secrets: [String] = []
        for (name, value) in request.headers where masks(name, of: request) {
            secrets.append(value)
            // `Bearer <token>`: the token may be quoted without its scheme.
            let scheme = value.splitScalars(" ", maxSplits: 1)
            if scheme.count == 2 { secrets.append(String(scheme[1])) }
            if name.equalsIgnoringASCIICase("Cookie") {
                secrets += value.splitScalars(";").compactMap {
                    $0.splitScalars("=", maxSplits: 1).last.map(String.init)
                }
            }
        }
        for (name, value) in request.headers where !masks(name, of: request) {
            _ = redaction.maskingURLs(in: value, masked: &secrets)
        }
        // The user information, whole and as the Basic credentials built from it, and the query.
        _ = redaction.url(string: request.url.absoluteString, masked: &secrets)
        // Foundation's `password` may be percent-encoded (it is on Linux); a server may quote either spelling.
        secrets += [true, false].compactMap { request.url.password(percentEncoded: $0) }
        return secrets
    }

    /// The standard reason phrase; empty for codes without one, which HAR allows.
    static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 206: "Partial Content"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 418: "I'm a teapot"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        default: ""
        }
    }
}
