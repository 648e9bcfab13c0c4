import Foundation

/// A response a handler returns; the connection adds the framing headers when it writes it.
struct HTTPResponse: Sendable {
    /// Writes a streamed body by calling `write` with each chunk in order; `write` answers
    /// `false` once the client is gone, and the producer should then return.
    typealias BodyProducer = @Sendable (_ write: (Data) -> Bool) -> Void

    /// Writes a body of unknown length: each `write` goes out at once as one chunk of its own, so a
    /// client sees every event as soon as it is written. `write` answers `false` once the client is
    /// gone; the producer then returns, and what it returns says how the body ends.
    typealias ChunkedBodyProducer = @Sendable (_ write: (Data) -> Bool) -> BodyEnding

    /// How a chunked body ends once its producer returns.
    enum BodyEnding: Sendable {
        /// The last, empty chunk: the body is complete and the connection may be kept alive.
        case complete
        /// The connection closes without the last chunk, as when a server dies or a proxy drops a
        /// stream: the client sees the body end early.
        case drop
    }

    enum Body: Sendable {
        case data(Data)
        /// `length` is announced as `Content-Length`; the producer generates the bytes as they are
        /// written, so a gigabyte body costs the server one chunk of memory. A producer that
        /// stops short of `length` makes the connection close mid-body.
        case stream(length: Int, producer: BodyProducer)
        /// No length is announced: `Transfer-Encoding: chunked` (to an HTTP/1.0 client, the bytes
        /// as they are and then the connection closes), for bodies that are produced as events
        /// happen and may never end.
        case chunked(producer: ChunkedBodyProducer)
    }

    var status: Int
    /// Everything but `Content-Length`, `Transfer-Encoding` and `Connection`, which `head` writes itself.
    var headers: [HTTPHeader]
    var body: Body
    /// Set only on ``dropConnection``: the connection closes without anything being written.
    private(set) var dropsConnection = false
    /// Set only on ``raw(_:)``: the writer sends every byte itself, then the connection ends.
    private(set) var rawWriter: RawConnection.Writer?

    init(status: Int, headers: [HTTPHeader] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = .data(body)
    }

    init(status: Int, headers: [HTTPHeader] = [], length: Int, producer: @escaping BodyProducer) {
        self.status = status
        self.headers = headers
        self.body = .stream(length: length, producer: producer)
    }

    /// A chunked body of unknown length, sent as it is produced; see ``Body/chunked(producer:)``.
    init(status: Int, headers: [HTTPHeader] = [], chunked producer: @escaping ChunkedBodyProducer) {
        self.status = status
        self.headers = headers
        self.body = .chunked(producer: producer)
    }

    /// The length `head` announces; `nil` for a chunked body, whose length nobody knows in advance.
    var contentLength: Int? {
        switch body {
        case .data(let data): data.count
        case .stream(let length, _): length
        case .chunked: nil
        }
    }

    /// 1xx, 204 and 304 responses have no body and therefore no `Content-Length` (RFC 9110 §8.6).
    var allowsBody: Bool {
        status >= 200 && status != 204 && status != 304
    }

    /// A 1xx status as a final answer leaves the client unsure where the next response starts,
    /// so the connection ends after it.
    var closesConnection: Bool {
        status < 200
    }

    /// The status line and headers, framing headers included, up to the blank line. A body of
    /// unknown length is announced as chunked when `chunkedAllowed` (the client speaks HTTP/1.1);
    /// otherwise it has no framing header and ends when the connection closes.
    func head(keepAlive: Bool, chunkedAllowed: Bool = true) -> Data {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(for: status))\r\n"
        for header in headers {
            head += "\(header.name): \(header.value)\r\n"
        }
        if allowsBody {
            if let contentLength {
                head += "Content-Length: \(contentLength)\r\n"
            } else if chunkedAllowed {
                head += "Transfer-Encoding: chunked\r\n"
            }
        }
        head += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        head += "\r\n"
        return Data(head.utf8)
    }

    /// The interim answer to `Expect: 100-continue`.
    static let continueResponse = Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    // MARK: Common responses

    /// A JSON document as httpbin writes it: `application/json`, keys sorted, and the trailing
    /// newline httpbin's `jsonify` adds (its `/json` endpoint is the one without it).
    static func json(_ object: Any, status: Int = 200, trailingNewline: Bool = true) -> HTTPResponse {
        guard let data = jsonBody(object, trailingNewline: trailingNewline) else { return serverError }
        return HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", "application/json")], body: data)
    }

    /// The bytes of `json(_:)`'s body, or `nil` when `object` cannot be JSON.
    static func jsonBody(_ object: Any, trailingNewline: Bool = true) -> Data? {
        // Checked first: on Darwin an invalid object raises an Objective-C exception, not an error.
        guard JSONSerialization.isValidJSONObject(object),
            var data = try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else {
            return nil
        }
        if trailingNewline { data.append(0x0A) }
        return data
    }

    /// `object` as one line of JSON and a newline, keys sorted, as a streamed JSON-lines body
    /// (`/stream/{n}`) sends each item; `nil` when `object` cannot be JSON.
    static func jsonLine(_ object: Any) -> Data? {
        guard JSONSerialization.isValidJSONObject(object),
            var data = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else {
            return nil
        }
        data.append(0x0A)
        return data
    }

    /// No answer at all: the connection closes as if the server had died mid-request.
    static let dropConnection = {
        var response = HTTPResponse(status: 500)
        response.dropsConnection = true
        return response
    }()

    /// No status line or framing from the connection: `writer` puts whatever it likes on the wire
    /// — garbage, a cut chunked body, a reset — and the connection ends after it.
    static func raw(_ writer: @escaping RawConnection.Writer) -> HTTPResponse {
        var response = HTTPResponse(status: 500)
        response.rawWriter = writer
        return response
    }

    static func text(_ text: String, status: Int, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", contentType)], body: Data(text.utf8))
    }

    /// The small HTML error page Flask serves, so bodies look the same as httpbin's.
    /// `name` is for the few errors werkzeug names differently from the reason phrase.
    static func htmlError(
        _ status: Int, _ message: String, name: String? = nil, headers: [HTTPHeader] = []
    ) -> HTTPResponse {
        let name = name ?? reasonPhrase(for: status)
        let html = """
            <!doctype html>
            <html lang=en>
            <title>\(status) \(name)</title>
            <h1>\(name)</h1>
            <p>\(message)</p>

            """
        var response = text(html, status: status, contentType: "text/html; charset=utf-8")
        response.headers += headers
        return response
    }

    static let notFound = htmlError(
        404,
        "The requested URL was not found on the server. "
            + "If you entered the URL manually please check your spelling and try again.")

    static let serverError = htmlError(
        500,
        "The server encountered an internal error and was unable to "
            + "complete your request. Either the server is overloaded or there is an error in the application.")

    /// werkzeug's `RequestEntityTooLarge`, raised when a form exceeds Flask's form limits.
    static let formTooLarge = htmlError(
        413, "The data value transmitted exceeds the capacity limit.", name: "Request Entity Too Large")

    /// The page gunicorn itself serves when a streaming httpbin handler fails before its first chunk.
    static let gunicornServerError = text(
        "<html>\n  <head>\n    <title>Internal Server Error</title>\n  </head>\n  <body>\n"
            + "    <h1><p>Internal Server Error</p></h1>\n    \n  </body>\n</html>\n",
        status: 500, contentType: "text/html")

    static func reasonPhrase(for status: Int) -> String {
        reasonPhrases[status] ?? "Unknown"
    }

    private static let reasonPhrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
        104: "Upload Resumption Supported",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information",
        204: "No Content", 205: "Reset Content", 206: "Partial Content", 207: "Multi-Status",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other",
        304: "Not Modified", 305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden",
        404: "Not Found", 405: "Method Not Allowed", 406: "Not Acceptable",
        407: "Proxy Authentication Required", 408: "Request Timeout", 409: "Conflict", 410: "Gone",
        411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable",
        417: "Expectation Failed", 418: "I'm a Teapot", 421: "Misdirected Request",
        422: "Unprocessable Content", 425: "Too Early", 426: "Upgrade Required",
        428: "Precondition Required", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
        451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
        503: "Service Unavailable", 504: "Gateway Timeout", 505: "HTTP Version Not Supported",
    ]
}
