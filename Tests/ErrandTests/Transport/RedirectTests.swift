import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Redirects, which both transports follow themselves: the method and body each status keeps, and
/// the credentials that must never reach another origin.
@Suite("Redirects", .enabled(if: CurlTransport.isAvailable))
struct RedirectTests {
    private static func redirect(to target: String, status: Int) -> String {
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        return "/redirect-to?status_code=\(status)&url=\(encoded)"
    }

    private func send(_ request: TransportRequest, through kind: TransportKind) async -> TransportProbe.Outcome {
        let probe = TransportProbe()
        _ = probe.send(request, through: kind.make())
        return await probe.completion()
    }

    @Test(arguments: TransportKind.allCases, [307, 308])
    func aPostRedirectedWith307Or308KeepsItsMethodAndBody(_ kind: TransportKind, _ status: Int) async throws {
        var post = try TransportRequest.loopback(
            Self.redirect(to: "/anything", status: status), method: "POST", body: Data("kept=yes".utf8))
        post.headers["Content-Type"] = "application/x-www-form-urlencoded"
        let outcome = await send(post, through: kind)
        #expect(outcome.statusCode == 200)
        #expect(outcome.json["method"] as? String == "POST")
        #expect(outcome.json["form"] as? [String: String] == ["kept": "yes"])
        if kind == .curl { #expect(outcome.metrics?.redirectCount == 1) }
        #expect(outcome.headCount == 1)
    }

    @Test(arguments: TransportKind.allCases, [301, 302, 303])
    func aPostRedirectedWith301To303BecomesAGetWithoutBody(_ kind: TransportKind, _ status: Int) async throws {
        let post = try TransportRequest.loopback(
            Self.redirect(to: "/anything", status: status), method: "POST", body: Data("dropped=yes".utf8))
        let outcome = await send(post, through: kind)
        #expect(outcome.json["method"] as? String == "GET")
        #expect(outcome.json["data"] as? String == "")
        #expect(outcome.echoedHeaders.headerField("Content-Type") == nil)
    }

    @Test(arguments: TransportKind.allCases)
    func credentialsNeverFollowARedirectToAnotherOrigin(_ kind: TransportKind) async throws {
        let other = try TestServer(host: "127.0.0.2")
        defer { other.stop() }
        var request = try TransportRequest.loopback(Self.redirect(to: other.baseURL + "/headers", status: 302))
        request.headers = [
            "Authorization": "Bearer secret-token", "Cookie": "session=secret", "Proxy-Authorization": "Basic c2VjcmV0",
            "X-Kept": "kept",
        ]
        let outcome = await send(request, through: kind)
        let received = try #require(other.receivedRequests(path: "/headers").last)
        #expect(outcome.statusCode == 200)
        #expect(outcome.echoedHeaders.headerField("X-Kept") == "kept")
        for name in ["Authorization", "Cookie", "Proxy-Authorization"] {
            #expect(outcome.echoedHeaders.headerField(name) == nil, "\(name) reached the other origin")
        }
        #expect(received.headers.allSatisfy { !$0.value.contains("secret") && !$0.value.contains("c2VjcmV0") })
    }

    /// Puts an API key and a token in header fields of its own, as many APIs want them.
    struct KeyAuthenticator: Authenticator {
        struct Key: AuthenticationCredential {
            var requiresRefresh: Bool { false }
        }

        func apply(_ credential: Key, to request: inout TransportRequest) {
            request.headers["X-API-Key"] = "secret-api-key"
            request.headers["X-Client"] = "secret-client"
        }

        func refresh(_ credential: Key) async throws(ErrandError) -> Key { credential }
    }

    struct Redirected: BaseRequest {
        let url: String
        var headers: [String: String] { ["X-Auth-Token": "secret-own-token", "X-Kept": "kept"] }
    }

    /// What an authenticator applied, and a request's own header whose name marks a secret, are
    /// credentials as `Authorization` is: they stay with their origin.
    @Test(arguments: TransportKind.allCases)
    func credentialsAnAuthenticatorOrTheRequestAddedNeverFollowARedirectToAnotherOrigin(_ kind: TransportKind)
        async throws
    {
        let server = try TestServer()
        let other = try TestServer(host: "127.0.0.2")
        defer {
            server.stop()
            other.stop()
        }
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "errand.redirect-tests")
        config.addInterceptor(AuthenticationInterceptor(authenticator: KeyAuthenticator(), credential: .init()))
        let agent = NetworkAgent(config: config, transport: kind.make())
        let answer = try await agent.response(
            Redirected(url: Self.redirect(to: other.baseURL + "/headers", status: 302)))
        let echoed = try #require(answer.object["headers"] as? [String: String])
        #expect(echoed.headerField("X-Kept") == "kept")
        for name in ["X-API-Key", "X-Client", "X-Auth-Token"] {
            #expect(echoed.headerField(name) == nil, "\(name) reached the other origin")
        }
        let received = try #require(other.receivedRequests(path: "/headers").last)
        #expect(received.headers.allSatisfy { !$0.value.contains("secret") })
        // Within the origin they go on.
        let same = try await agent.response(Redirected(url: Self.redirect(to: "/headers", status: 302)))
        let kept = try #require(same.object["headers"] as? [String: String])
        #expect(kept.headerField("X-API-Key") == "secret-api-key" && kept.headerField("X-Auth-Token") != nil)
    }

    @Test(arguments: TransportKind.allCases)
    func credentialsFollowARedirectWithinTheOrigin(_ kind: TransportKind) async throws {
        var request = try TransportRequest.loopback(Self.redirect(to: "/headers", status: 302))
        request.headers["Authorization"] = "Bearer same-origin"
        let outcome = await send(request, through: kind)
        #expect(outcome.echoedHeaders.headerField("Authorization") == "Bearer same-origin")
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectToAnotherPortIsAnotherOrigin(_ kind: TransportKind) async throws {
        let other = try TestServer()
        defer { other.stop() }
        var request = try TransportRequest.loopback(Self.redirect(to: other.baseURL + "/headers", status: 307))
        request.headers["Authorization"] = "Bearer other-port"
        let outcome = await send(request, through: kind)
        #expect(outcome.statusCode == 200)
        #expect(outcome.echoedHeaders.headerField("Authorization") == nil)
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectWithoutLocationIsTheResponse(_ kind: TransportKind) async throws {
        let outcome = await send(try TransportRequest.loopback("/status/302"), through: kind)
        // httpbin's /status/302 names a Location; a 304 has none and is delivered as it is.
        #expect(outcome.statusCode == 200 || outcome.statusCode == 404)
        let notModified = await send(try TransportRequest.loopback("/status/304"), through: kind)
        #expect(notModified.statusCode == 304 && notModified.error == nil)
    }
}

/// The redirect rules as values, including the HTTPS cases the loopback server cannot serve.
@Suite("RedirectPolicy")
struct RedirectPolicyTests {
    private let policy = RedirectPolicy()

    private func request(_ url: String, method: String = "GET", headers: [String: String] = [:]) throws
        -> TransportRequest
    {
        TransportRequest(url: try #require(URL(string: url)), method: method, headers: headers, body: Data("b".utf8))
    }

    @Test func httpsToHttpIsRefused() throws {
        let result = policy.next(
            after: try request("https://api.example.com/a"), statusCode: 302, location: "http://api.example.com/b",
            redirectCount: 0)
        guard case .failure(.redirectRefused(let reason)) = result else {
            Issue.record("expected a refusal, got \(result)")
            return
        }
        #expect(reason.contains("HTTPS to HTTP"))
    }

    @Test func httpToHttpsAndHttpsToHttpsAreFollowed() throws {
        for (from, to) in [
            ("http://a.example/x", "https://a.example/y"), ("https://a.example/x", "https://b.example/y"),
        ] {
            let next = try policy.next(after: request(from), statusCode: 301, location: to, redirectCount: 0).get()
            #expect(next.url.absoluteString == to)
        }
    }

    @Test func theOriginIncludesSchemeHostAndPort() throws {
        let secret = ["authorization": "Bearer t", "Cookie": "c=1", "Proxy-Authorization": "p", "Accept": "x"]
        let cases: [(String, Bool)] = [
            ("https://a.example/next", true), ("https://a.example:443/next", true),
            ("https://a.example:8443/next", false), ("https://b.example/next", false),
        ]
        for (location, keeps) in cases {
            let next = try policy.next(
                after: request("https://a.example/start", headers: secret), statusCode: 307, location: location,
                redirectCount: 0
            ).get()
            #expect(next.headers.count == (keeps ? 4 : 1), "\(location)")
            #expect(next.headers["Accept"] == "x")
        }
    }

    @Test func theFieldsARequestMarksAsCredentialsStayWithTheirOrigin() throws {
        var marked = try request("https://a.example/start", headers: ["x-api-key": "k", "X-Other": "o"])
        marked.credentialHeaders = ["X-API-Key"]
        let away = try policy.next(after: marked, statusCode: 302, location: "https://b.example/", redirectCount: 0)
            .get()
        #expect(away.headers == ["X-Other": "o"])
        let home = try policy.next(after: marked, statusCode: 302, location: "/next", redirectCount: 0).get()
        #expect(home.headers.count == 2)
    }

    @Test func relativeLocationsResolveAgainstTheCurrentURL() throws {
        let next = try policy.next(
            after: request("http://a.example/dir/page"), statusCode: 302, location: "../other?q=1", redirectCount: 0
        ).get()
        #expect(next.url.absoluteString == "http://a.example/other?q=1")
    }

    @Test func theLimitEndsALoopWithTooManyRedirects() throws {
        let result = policy.next(
            after: try request("http://a.example/loop"), statusCode: 302, location: "/loop", redirectCount: policy.limit
        )
        guard case .failure(.redirectRefused(let reason)) = result else {
            Issue.record("expected too many redirects, got \(result)")
            return
        }
        #expect(reason.contains("after 16 redirects"))
    }

    @Test func aLocationThatIsNotHTTPIsRefused() throws {
        let result = policy.next(
            after: try request("http://a.example/"), statusCode: 302, location: "file:///etc/passwd", redirectCount: 0)
        guard case .failure(.redirectRefused) = result else {
            Issue.record("expected a refusal, got \(result)")
            return
        }
    }
}
