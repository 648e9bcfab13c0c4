import ErrandScenarios
import Foundation
import Testing

@testable import Errand
@testable import ErrandTestServer

/// What ``HTTPStateParserTests`` stands on: the test server routes a request in absolute-form, as
/// a client sends its proxy, and serves the http-state parser tests byte for byte as the group's
/// harness did.
@Suite("The http-state harness of the test server")
struct CookieParserHarnessTests {
    let server: TestServer

    init() throws {
        server = try TestServer(cookieParserTests: HTTPStateParserTests.fixtures)
    }

    /// Every byte the server sends for `head` (a request head without its blank line) until it
    /// closes the connection.
    private func exchange(_ head: String, extra: [UInt8] = []) async throws -> [UInt8] {
        let request = Data(head.utf8) + Data(extra) + Data("\r\n\r\n".utf8)
        return try await onOwnThread { [port = server.port] in
            let connection = try RawHTTP(port: port)
            try connection.send(request)
            var received: [UInt8] = []
            while let chunk = connection.receive() { received += chunk }
            return received
        }
    }

    private func proxied(_ target: String, _ fields: String = "") async throws -> [UInt8] {
        try await exchange(
            "GET http://home.example.org:8888\(target) HTTP/1.1\r\nHost: home.example.org:8888\r\nConnection: close\(fields)"
        )
    }

    // MARK: Absolute-form and the proxy path

    @Test(arguments: [
        ("http://home.example.org:8888/get?x=1", "/get", "x=1"),
        ("HTTP://home.example.org/a/b", "/a/b", ""),
        ("http://home.example.org:8888?x=1", "/", "x=1"),
        ("http://home.example.org", "/", ""),
        ("/redirect-to?url=http://example.com/x", "/redirect-to", "url=http://example.com/x"),
        ("/anything/http://a.b/c", "/anything/http://a.b/c", ""),
    ])
    func aTargetIsRoutedByItsPathAndQuery(target: String, path: String, query: String) {
        let request = HTTPRequest(
            method: "GET", target: target, version: "HTTP/1.1", headers: [], body: Data(), peerAddress: "127.0.0.1")
        #expect(request.rawPath == path[...])
        #expect(request.rawQuery == query[...])
    }

    /// `/redirect-to?url=http://…` was routed by the path of the URL in its query, and answered 404.
    @Test func anOriginFormQueryThatHoldsAURLKeepsItsPath() async throws {
        let response = try await RawHTTP.get(server, "/redirect-to?url=http://example.com/x")
        #expect(response.status == 302)
        #expect(response.headers["location"] == "http://example.com/x")
    }

    @Test func anAbsoluteFormRequestReachesAnOrdinaryRoute() async throws {
        let response = String(decoding: try await proxied("/get?x=1"), as: UTF8.self)
        #expect(response.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(response)")
        #expect(response.contains("\"url\" : \"http://home.example.org:8888/get?x=1\""), "\(response)")
    }

    /// Through ``ConnectionOptions/proxy`` where the transport honours an explicit proxy; where it
    /// cannot (URLSessionTransport on Linux) it refuses, naming the option, rather than go direct.
    @Test func anAgentReachesAnOrdinaryRouteThroughTheServerAsItsProxy() async throws {
        struct Get: BaseRequest {
            var url: String { "http://home.example.org:8888/get?via=proxy" }
        }
        let config = NetworkConfig()
        config.callbackQueue = DispatchQueue(label: "errand.cookie-parser-harness-tests.callbacks")
        config.connection.proxy = .http(try #require(URL(string: server.baseURL)))
        do {
            let response = try await NetworkAgent(config: config).response(Get())
            let echo = try #require(response.jsonObject as? [String: Any])
            #expect(echo["url"] as? String == "http://home.example.org:8888/get?via=proxy")
            #expect((echo["headers"] as? [String: String])?["Host"] == "home.example.org:8888")
            #expect(server.receivedRequests(path: "/get").last?.query == "via=proxy")
        } catch {
            guard let refusal = error as? ErrandError, case .transport(let failure) = refusal else { throw error }
            #expect(failure.localizedDescription.contains("ConnectionOptions.proxy"), "\(failure)")
        }
    }

    // MARK: The parser tests, byte for byte

    @Test(arguments: [
        // The harness's own Location is added when the file has none.
        ("0001", "Set-Cookie: foo=bar\r\nLocation: /cookie-parser-result?0001\r\n"),
        // A value of only spaces is empty: `\s*` took them and the line's end.
        ("0028", "Set-Cookie: foo\r\nSet-Cookie: \r\nLocation: /cookie-parser-result?0028\r\n"),
        (
            "disabled-chromium0022",
            "Set-Cookie: AAA=BB\0ZYX\r\nLocation: /cookie-parser-result?disabled-chromium0022\r\n"
        ),
        (
            "disabled-chromium0023",
            "Set-Cookie: AAA=BB\rZYX\r\nLocation: /cookie-parser-result?disabled-chromium0023\r\n"
        ),
        (
            "path0029",
            "Set-Cookie: a=b; \tpath\t=\t/cookie-parser-result\t\r\nSet-Cookie: x=y; \tpath\t=\t/book\t\r\n"
                + "Location: /cookie-parser-result?path0029\r\n"
        ),
        (
            "optional-domain0030",
            "Set-Cookie: foo=bar; domain=\r\nLocation: http://home.example.org:8888/cookie-parser-result?optional-domain0030\r\n"
        ),
        ("charset0001", "Set-Cookie: foo=春节回家路·春运完全手册\r\nLocation: /cookie-parser-result?charset0001\r\n"),
    ])
    func aTestIsServedAsTheHarnessServedIt(name: String, fields: String) async throws {
        let expected = Array("HTTP/1.0 302 Found\r\n\(fields)\r\n".utf8)
        #expect(try await proxied("/cookie-parser?\(name)") == expected)
    }

    @Test func everyTestIsARedirectWithItsSetCookieFields() async throws {
        for name in try HTTPStateParserTests.testNames() {
            let head = String(decoding: try await proxied("/cookie-parser?\(name)"), as: UTF8.self)
            let file = try String(
                decoding: Data(contentsOf: HTTPStateParserTests.fixtures.appendingPathComponent(name + "-test")),
                as: UTF8.self)
            #expect(head.hasPrefix("HTTP/1.0 302 Found\r\n"), "\(name)")
            let setCookies = head.components(separatedBy: "\r\n").filter { $0.hasPrefix("Set-Cookie:") }.count
            #expect(setCookies == file.components(separatedBy: "Set-Cookie:").count - 1, "\(name)")
            #expect(head.components(separatedBy: "\r\nLocation: ").count == 2, "one Location: \(name)")
        }
    }

    // MARK: The result page

    private func result(_ name: String, cookies: [[UInt8]]) async throws -> [UInt8] {
        var fields: [UInt8] = []
        for cookie in cookies { fields += Array("\r\nCookie: ".utf8) + cookie }
        return try await exchange(
            "GET http://home.example.org:8888/cookie-parser-result?\(name) HTTP/1.1\r\nHost: home.example.org:8888",
            extra: fields)
    }

    private static let resultHead =
        "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n"
        + "Set-Cookie: foo=deleted; Expires=Fri, 07 Aug 2007 08:04:19 GMT\r\n"
        + "Set-Cookie: foo2=deleted; Expires=Fri, 07 Aug 2007 08:04:19 GMT\r\n"
        + "Set-Cookie: foo3=deleted; Expires=Fri, 07 Aug 2007 08:04:19 GMT\r\n\r\n"

    @Test func theExpectedCookiePasses() async throws {
        #expect(try await result("0001", cookies: [Array("foo=bar".utf8)]) == Array((Self.resultHead + "PASS\n").utf8))
    }

    @Test func noCookieWhereOneIsExpectedFailsSayingBoth() async throws {
        let body = Self.resultHead + "FAIL\nActual: None\nExpected: foo=bar\nTest Case:\nSet-Cookie: foo=bar\n"
        #expect(try await result("0001", cookies: []) == Array(body.utf8))
    }

    /// `0028-expected` names `Cookie:` twice (inside `Set-Cookie:`): the harness expected none.
    @Test func anExpectedFileThatNamesTwoCookiesExpectsNone() async throws {
        let page = String(decoding: try await result("0028", cookies: []), as: UTF8.self)
        #expect(page.hasSuffix("\r\n\r\nPASS\n"), "\(page)")
    }

    /// The bytes of the `Cookie` field are compared and quoted as they came, not as decoded text.
    @Test func theCookieIsComparedByteForByte() async throws {
        let utf8 = Array("foo=春节回家路·春运完全手册".utf8)
        #expect(String(decoding: try await result("charset0001", cookies: [utf8]), as: UTF8.self).hasSuffix("PASS\n"))
        // Not UTF-8, so the server decodes it as Latin-1: `é`, which is C3 A9 in UTF-8.
        let latin1: [UInt8] = Array("foo=caf".utf8) + [0xE9]
        let page = try await result("0001", cookies: [latin1])
        let body = Array(page.dropFirst(Self.resultHead.utf8.count))
        #expect(body.starts(with: Array("FAIL\nActual: ".utf8) + latin1 + [0x0A]), "\(body)")
    }

    /// A cookie-string split across `Cookie` fields (RFC 6265bis §5.8.1) is joined with `; `.
    @Test func aCookieStringSplitAcrossFieldsIsJoined() async throws {
        let page = try await result("0021", cookies: [Array("a=b".utf8), Array("c=d".utf8)])
        #expect(String(decoding: page, as: UTF8.self).hasSuffix("\r\n\r\nPASS\n"))
    }

    // MARK: What is not a test

    @Test(arguments: [
        ("/cookie-parser/?0001", 302), ("/cookie-parser/any/thing?0001", 302), ("/cookie-parser-result/x?0001", 200),
        ("/cookie-parser", 404), ("/cookie-parser?", 404), ("/cookie-parser?nope", 404),
        ("/cookie-parser?../parser/0001", 404), ("/cookie-parser?..", 404), ("/cookie-parserx?0001", 404),
        ("/cookie-parser-result?nope", 404), ("/cookie-parser-result", 404),
    ])
    func targetsAreMatchedAsTheHarnessMatchedThem(target: String, status: Int) async throws {
        let head = String(decoding: try await proxied(target), as: UTF8.self)
        #expect(head.hasPrefix("HTTP/1.0 \(status) ") || head.hasPrefix("HTTP/1.1 \(status) "), "\(target): \(head)")
    }

    @Test func withoutAFolderTheRoutesAreNotFound() async throws {
        let bare = try TestServer()
        defer { bare.stop() }
        #expect(try await RawHTTP.get(bare, "/cookie-parser?0001").status == 404)
        #expect(try await RawHTTP.get(bare, "/cookie-parser-result?0001").status == 404)
    }

    // MARK: The harness's regular expressions

    @Test(arguments: [
        ("Set-Cookie:foo=bar:baz\n", "Set-Cookie:foo=bar", "baz"),  // `\S+` is greedy: the run's last colon
        ("Set-Cookie: \t\n", "Set-Cookie", ""),
        ("  X-A:  v v  \r\n", "X-A", "v v  \r"),
        (":a: b\n", ":a", "b"),
        ("a:\u{0B}b\n", "a", "b"),
        ("Set-Cookie: a=b\u{1C}\n", "Set-Cookie", "a=b\u{1C}"),  // Not `\s` in a byte string.
    ])
    func aLineSplitsAsPythonSplitIt(line: String, name: String, value: String) throws {
        let field = try #require(CookieParserCase.field(in: Array(line.utf8)[...]))
        #expect(Array(field.name) == Array(name.utf8))
        #expect(Array(field.value) == Array(value.utf8))
    }

    @Test func aLineWithoutAColonIsNoField() {
        #expect(CookieParserCase.field(in: Array("nocolon here\n".utf8)[...]) == nil)
    }

    @Test func cookieValuesAreFoundAsPythonFoundThem() {
        let values = { (text: String) in CookieParserCase.cookieValues(in: Array(text.utf8)[...]).map { Array($0) } }
        #expect(values("Set-Cookie: foo\nSet-Cookie:    \n") == [Array("foo".utf8), []])
        #expect(values("Cookie:\n\nfoo=bar\n") == [Array("foo=bar".utf8)])
        #expect(values("\n").isEmpty)
    }
}
