import Foundation

/// A response a handler returns; the connection adds the framing headers when it writes it.
struct HTTPResponse: Sendable {
    var status: Int
    /// Everything but `Content-Length` and `Connection`, which `serialized` writes itself.
    var headers: [HTTPHeader]
    var body: Data

    init(status: Int, headers: [HTTPHeader] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
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

    /// The bytes on the wire. `includeBody` is `false` for HEAD: same headers, no body.
    func serialized(includeBody: Bool, keepAlive: Bool) -> Data {
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(for: status))\r\n"
        for header in headers {
            head += "\(header.name): \(header.value)\r\n"
        }
        if allowsBody {
            head += "Content-Length: \(body.count)\r\n"
        }
        head += keepAlive ? "Connection: keep-alive\r\n" : "Connection: close\r\n"
        head += "\r\n"
        var data = Data(head.utf8)
        if includeBody && allowsBody {
            data.append(body)
        }
        return data
    }

    /// The interim answer to `Expect: 100-continue`.
    static let continueResponse = Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    // MARK: Common responses

    /// A JSON document as httpbin writes it: `application/json`, keys sorted, and the trailing
    /// newline httpbin's `jsonify` adds (its `/json` endpoint is the one without it).
    static func json(_ object: Any, status: Int = 200, trailingNewline: Bool = true) -> HTTPResponse {
        // Checked first: on Darwin an invalid object raises an Objective-C exception, not an error.
        guard JSONSerialization.isValidJSONObject(object),
            var data = try? JSONSerialization.data(
                withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else {
            return serverError
        }
        if trailingNewline { data.append(0x0A) }
        return HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", "application/json")], body: data)
    }

    static func text(_ text: String, status: Int, contentType: String = "text/plain; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [HTTPHeader("Content-Type", contentType)], body: Data(text.utf8))
    }

    /// The small HTML error page Flask serves, so bodies look the same as httpbin's.
    static func htmlError(_ status: Int, _ message: String, headers: [HTTPHeader] = []) -> HTTPResponse {
        let title = "\(status) \(reasonPhrase(for: status))"
        let html = """
            <!doctype html>
            <html lang=en>
            <title>\(title)</title>
            <h1>\(reasonPhrase(for: status))</h1>
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

    static func reasonPhrase(for status: Int) -> String {
        reasonPhrases[status] ?? "Unknown"
    }

    private static let reasonPhrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 102: "Processing", 103: "Early Hints",
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
