import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Cookies where they meet the rest of Errand: a WebSocket's handshake, the response cache's
/// variants, the fields URLSession joins, and a token a server answers.
struct CookieWiringHostileTests {
    struct Socket: BaseRequest {
        var query = ""
        var url: String { "/ws/echo" + query }
    }

    struct Me: BaseRequest {
        var url = "/http-cache/me"
        var followsHTTPCaching: Bool { true }
        var responseSerializerType: ResponseSerializerType { .data }
    }

    /// A cookie set by the `101` is stored, as a browser stores it: a load balancer's sticky
    /// cookie must go with the socket's reconnects, and a log-in over a socket is kept.
    @Test func aWebSocketHandshakesSetCookieIsStored() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent()
        let socket = try await agent.webSocket(Socket(query: "?set_cookie=pin%3Dnode-7%3B%20Path%3D%2F"))
        #expect(socket.response.statusCode == 101)
        await socket.close()
        #expect(fixture.config.cookieJar.allCookies.map { "\($0.name)=\($0.value)" } == ["pin=node-7"])

        let again = try await agent.webSocket(Socket())
        await again.close()
        let handshakes = fixture.server.receivedRequests(path: "/ws/echo")
        #expect(handshakes.last?.header("Cookie") == "pin=node-7", "the reconnect sends it back")
    }

    /// A response that sets a cookie and varies on `Cookie` answered the request as it went out:
    /// without that cookie. It must not be stored as the variant of the cookie it set, to be
    /// served to the next request, which carries the cookie and which the server answers otherwise.
    @Test func aResponseVaryingOnCookieIsStoredForTheCookiesSentNotTheOnesItSet() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try CacheFixture(baseURL: server.baseURL)
        defer { fixture.removeDirectory() }
        server.setCacheableResource(
            "me",
            CacheableResource(
                status: 200, body: #"{"signedIn":false}"#,
                headers: ["Cache-Control": "max-age=600", "Vary": "Cookie", "Set-Cookie": "session=new; Path=/"]))
        let agent = fixture.makeAgent()
        let first = try await agent.response(Me())
        #expect(!first.isDataFromCache)
        #expect(server.receivedRequests(path: "/http-cache/me").last?.header("Cookie") == nil)

        let second = try await agent.response(Me())
        #expect(!second.isDataFromCache, "the answer to a request without the cookie answers one with it")
        #expect(server.receivedRequests(path: "/http-cache/me").count == 2)
    }

    /// A token is sent as a header field: one with a line break in it would end the field and
    /// start another that the server, not the app, chose.
    @Test func aTokenResponseWithALineBreakInTheTokenIsRefused() throws {
        let body = Data(#"{"access_token":"abc\r\nCookie: session=attacker","expires_in":3600}"#.utf8)
        let response = Response(statusCode: 200, headers: ["Content-Type": "application/json"], data: body)
        #expect(throws: ErrandError.self) { try AccessToken(tokenResponse: response) }
    }
}
