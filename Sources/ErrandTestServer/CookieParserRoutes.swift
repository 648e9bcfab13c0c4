import Foundation

/// The IETF http-state group's cookie parser tests, served as the group's harness
/// (`tools/testserver/testserver.py`, `CookieParserHandler` and `CookieParserResultHandler`)
/// served them, from the folder given to ``TestServer/init(host:port:cookieParserTests:)``.
///
/// `/cookie-parser?NAME` answers `302` with each line of `NAME-test` as a header field, its bytes
/// as they are, and a `Location: /cookie-parser-result?NAME` unless the file has one;
/// `/cookie-parser-result?NAME` compares the request's `Cookie` with the one `NAME-expected` names
/// and answers `PASS` or `FAIL`, deleting the tests' persistent cookies. Each answer is HTTP/1.0,
/// ended by closing the connection, as Python's `BaseHTTPServer` answered. The tests name hosts
/// (`home.example.org:8888`), so a client reaches them through the server as its HTTP proxy.
enum CookieParserRoutes {
    static let all: [Route] = [
        Route(["GET", "POST"], "/cookie-parser/{rest*}", handler: parser),
        Route(["GET", "POST"], "/cookie-parser-result/{rest*}", handler: result),
    ]

    /// What the harness's result page sets, so that no test's persistent cookie outlives it.
    private static let deletions = ["foo", "foo2", "foo3"].map {
        (name: Array("Set-Cookie".utf8), value: Array("\($0)=deleted; Expires=Fri, 07 Aug 2007 08:04:19 GMT".utf8))
    }

    private static func parser(_ context: RouteContext) -> HTTPResponse {
        guard let test = test(context, handler: "/cookie-parser") else { return notFound }
        guard test.hasTestFile else { return notFound }
        // The harness raised on a line that is no field, its answer cut off: no answer is as close.
        guard let fields = test.fields else { return .dropConnection }
        var head = fields
        if !fields.contains(where: { String(decoding: $0.name, as: UTF8.self).lowercased() == "location" }) {
            head.append((Array("Location".utf8), Array("/cookie-parser-result?\(test.name)".utf8)))
        }
        return answer(status: 302, fields: head, body: [])
    }

    private static func result(_ context: RouteContext) -> HTTPResponse {
        guard let test = test(context, handler: "/cookie-parser-result") else { return notFound }
        let cookies = context.request.headers.filter { $0.name.lowercased() == "cookie" }.map(\.valueBytes)
        let textPlain = (name: Array("Content-Type".utf8), value: Array("text/plain".utf8))
        guard case .some(let expected) = test.expectedCookie else {
            var body = Array("Test not found \(test.name) full path:\(test.expectedPath)\n".utf8)
            for cookie in cookies { body += Array("Received Cookie: ".utf8) + cookie + [0x0A] }
            return answer(status: 404, fields: [textPlain], body: body)
        }
        // A client may split its one cookie-string across `Cookie` fields (RFC 6265bis §5.8.1):
        // they are rejoined as RFC 9113 §8.2.3 says. The harness kept only the last one.
        let actual = cookies.isEmpty ? nil : Array(cookies.joined(separator: Array("; ".utf8)))
        let passed = actual == expected
        var body = Array((passed ? "PASS\n" : "FAIL\n").utf8)
        if !passed {
            body += Array("Actual: ".utf8) + (actual ?? Array("None".utf8)) + [0x0A]
            body += Array("Expected: ".utf8) + (expected ?? Array("None".utf8)) + [0x0A]
            body += Array("Test Case:\n".utf8) + test.testFile
        }
        return answer(status: 200, fields: [textPlain] + deletions, body: body)
    }

    /// The test a request to `handler` names: what follows the first `?` of its target, matched
    /// as the harness's `_ShouldHandleRequest` did, on the target as sent: `handler`, then the
    /// end, a `?` or a `/`. `nil` when the target does not match or names no test.
    private static func test(_ context: RouteContext, handler: String) -> CookieParserCase? {
        guard let folder = context.server.cookieParserTests else { return nil }
        let target = context.request.originFormTarget
        guard target.hasPrefix(handler) else { return nil }
        let next = target.dropFirst(handler.count).first
        guard next == nil || next == "?" || next == "/", let mark = target.firstIndex(of: "?") else { return nil }
        return CookieParserCase(name: String(target[target.index(after: mark)...]), folder: folder)
    }

    /// The harness's `send_error(404)`: an HTML page, and the connection closed.
    private static var notFound: HTTPResponse {
        let page =
            "<head>\n<title>Error response</title>\n</head>\n<body>\n<h1>Error response</h1>\n"
            + "<p>Error code 404.\n<p>Message: Not Found.\n</body>\n"
        let fields = [(name: Array("Content-Type".utf8), value: Array("text/html".utf8))]
        return answer(status: 404, fields: fields, body: Array(page.utf8))
    }

    /// An HTTP/1.0 answer with `fields` written byte for byte, in order, and no framing field:
    /// the body ends when the connection closes, as `BaseHTTPServer`'s did.
    private static func answer(status: Int, fields: [(name: [UInt8], value: [UInt8])], body: [UInt8]) -> HTTPResponse {
        var wire = Array("HTTP/1.0 \(status) \(HTTPResponse.reasonPhrase(for: status))\r\n".utf8)
        for field in fields {
            wire += field.name + Array(": ".utf8) + field.value + [0x0D, 0x0A]
        }
        wire += [0x0D, 0x0A] + body
        let bytes = Data(wire)
        return .raw { connection in
            _ = connection.write(bytes)
            return .close
        }
    }
}
