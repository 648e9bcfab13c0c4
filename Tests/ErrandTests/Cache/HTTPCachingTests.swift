import Errand
import ErrandTestServer
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A request that follows HTTP caching, with its own method, header fields and policy.
struct HTTPCachedRequest: BaseRequest {
    var url: String
    var method = HTTPMethod.get
    var headers: [String: String] = [:]
    var cacheTimeInSeconds = 0
    var cachePolicy = CachePolicy.standard
    var requestAccessories: [any RequestAccessory] = []
    var responseSerializerType = ResponseSerializerType.json
    var followsHTTPCaching = true
}

/// `followsHTTPCaching`: stored and served as RFC 9111 says, from what the server sends.
@Suite("Response cache: following HTTP caching")
struct HTTPCachingTests {
    let server: TestServer
    let fixture: CacheFixture

    init() throws {
        server = try TestServer()
        fixture = try CacheFixture(baseURL: server.baseURL)
    }

    static let body = #"{"v":1}"#

    func serve(_ name: String, _ headers: [String: String], etag: String? = nil, status: Int = 200) {
        server.setCacheableResource(
            name, CacheableResource(status: status, body: Self.body, etag: etag, headers: headers))
    }

    /// Requests that reached the server for `name`.
    func sent(_ name: String) -> Int {
        server.receivedRequests(path: "/http-cache/\(name)").count
    }

    /// A custom `URLRequest` is sent and cached by its own method and URL: the request's `url` and
    /// `method` play no part, so another request with the same custom URL is answered from the cache.
    @Test func aCustomURLRequestIsCachedUnderItsOwnURL() async throws {
        defer { fixture.removeDirectory() }
        serve("custom", ["Cache-Control": "max-age=100"])
        struct Custom: BaseRequest {
            let target: URL
            let url: String
            var method: HTTPMethod { .post }
            var followsHTTPCaching: Bool { true }
            func buildCustomURLRequest() -> URLRequest? { URLRequest(url: target) }
        }
        let target = try #require(URL(string: server.baseURL + "/http-cache/custom"))
        let agent = fixture.makeAgent()
        let first = try await agent.response(Custom(target: target, url: "/never-sent"))
        let second = try await agent.response(Custom(target: target, url: "/nor-this"))
        #expect(!first.isDataFromCache)
        #expect(second.isDataFromCache)
        #expect(sent("custom") == 1)
    }

    @Test func aFreshResponseIsServedWithItsAgeUntilMaxAgeThenRevalidated() async throws {
        defer { fixture.removeDirectory() }
        serve("fresh", ["Cache-Control": "max-age=100"], etag: #""e1""#)
        let agent = fixture.makeAgent()
        let request = HTTPCachedRequest(url: "/http-cache/fresh")
        _ = try await agent.response(request)
        fixture.clock.advance(by: 40)
        let hit = try await agent.response(request)
        #expect(hit.isDataFromCache)
        #expect(hit.age == 40)
        #expect(hit.value(forHeader: "Age") == "40")
        #expect(sent("fresh") == 1)

        fixture.clock.advance(by: 70)
        let revalidated = try await agent.response(request)
        #expect(revalidated.isRevalidated)
        #expect(sent("fresh") == 2)
        #expect(server.receivedRequests(path: "/http-cache/fresh").last?.header("If-None-Match") == #""e1""#)
    }

    @Test func noStoreIsNeverStoredAndNoCacheIsAskedAboutEveryTime() async throws {
        defer { fixture.removeDirectory() }
        serve("no-store", ["Cache-Control": "max-age=100, no-store"])
        serve("no-cache", ["Cache-Control": "max-age=100, no-cache"], etag: #""e1""#)
        let agent = fixture.makeAgent()
        for _ in 0..<2 {
            #expect(try await !agent.response(HTTPCachedRequest(url: "/http-cache/no-store")).isDataFromCache)
        }
        #expect(sent("no-store") == 2)
        _ = try await agent.response(HTTPCachedRequest(url: "/http-cache/no-cache"))
        let asked = try await agent.response(HTTPCachedRequest(url: "/http-cache/no-cache"))
        #expect(asked.isRevalidated)
        #expect(server.cacheableAnswers("no-cache") == (full: 1, notModified: 1))
    }

    @Test func aNoCacheListingFieldsKeepsThemOutAndServesTheRestFresh() async throws {
        defer { fixture.removeDirectory() }
        serve(
            "listed",
            [
                "Cache-Control": #"max-age=100, no-cache="X-Session, X-Trace""#, "X-Session": "s1", "X-Trace": "t1",
                "X-Kept": "k",
            ])
        let agent = fixture.makeAgent()
        let request = HTTPCachedRequest(url: "/http-cache/listed")
        #expect(try await agent.response(request).value(forHeader: "X-Session") == "s1")
        let hit = try await agent.response(request)
        #expect(hit.isDataFromCache && !hit.isRevalidated)
        #expect(hit.value(forHeader: "X-Session") == nil && hit.value(forHeader: "X-Trace") == nil)
        #expect(hit.value(forHeader: "X-Kept") == "k")
        #expect(sent("listed") == 1)
    }

    @Test func eachVariantHasItsOwnEntry() async throws {
        defer { fixture.removeDirectory() }
        serve("vary", ["Cache-Control": "max-age=100", "Vary": "Accept-Language"])
        let agent = fixture.makeAgent()
        let english = HTTPCachedRequest(url: "/http-cache/vary", headers: ["Accept-Language": "en"])
        _ = try await agent.response(english)
        #expect(try await agent.response(english).isDataFromCache)
        let french = HTTPCachedRequest(url: "/http-cache/vary", headers: ["Accept-Language": "fr"])
        #expect(try await !agent.response(french).isDataFromCache)
        #expect(try await agent.response(french).isDataFromCache)
        #expect(try await agent.response(english).isDataFromCache, "the French variant did not replace it")
        let none = HTTPCachedRequest(url: "/http-cache/vary")
        #expect(try await !agent.response(none).isDataFromCache)
        #expect(try await agent.response(none).isDataFromCache, "sending no Accept-Language is a variant too")
        #expect(sent("vary") == 3)

        // Another process finds every variant through the files.
        await agent.waitForCacheWrites()
        let restarted = fixture.makeAgent()
        #expect(try await restarted.response(french).isDataFromCache)
        #expect(try await restarted.response(english).isDataFromCache)
        #expect(sent("vary") == 3)
    }

    @Test func aResponseVaryingOnOtherFieldsStartsTheVariantsAfresh() async throws {
        defer { fixture.removeDirectory() }
        serve("revary", ["Cache-Control": "max-age=100", "Vary": "Accept-Language"])
        let agent = fixture.makeAgent()
        let english = HTTPCachedRequest(url: "/http-cache/revary", headers: ["Accept-Language": "en", "X-Tier": "1"])
        _ = try await agent.response(english)
        serve("revary", ["Cache-Control": "max-age=100", "Vary": "X-Tier"])
        let tier2 = HTTPCachedRequest(url: "/http-cache/revary", headers: ["Accept-Language": "de", "X-Tier": "2"])
        _ = try await agent.response(tier2)
        #expect(try await agent.response(tier2).isDataFromCache)
        #expect(try await !agent.response(english).isDataFromCache, "stored under the fields the URL varied on before")
        #expect(sent("revary") == 3)
    }

    @Test func theRequestsOwnDirectivesAreHonoured() async throws {
        defer { fixture.removeDirectory() }
        serve("directives", ["Cache-Control": "max-age=100"], etag: #""e1""#)
        let agent = fixture.makeAgent()
        let plain = HTTPCachedRequest(url: "/http-cache/directives")
        _ = try await agent.response(plain)
        fixture.clock.advance(by: 30)
        var young = plain
        young.headers = ["Cache-Control": "max-age=10"]
        #expect(try await agent.response(young).isRevalidated, "older than the request accepts")
        // The 304 restarted the age: 110 s later the entry is 10 s stale.
        fixture.clock.advance(by: 110)
        var lenient = plain
        lenient.headers = ["Cache-Control": "max-stale=60"]
        let stale = try await agent.response(lenient)
        #expect(stale.isDataFromCache && stale.isStale, "within max-stale")
        #expect(sent("directives") == 2)

        let neverSent = HTTPCachedRequest(url: "/http-cache/absent", headers: ["Cache-Control": "only-if-cached"])
        let task = await agent.finishedTask(neverSent)
        #expect(task.error == .cacheMiss(.missing))
        #expect(sent("absent") == 0)
    }

    @Test func aNotFoundWithMaxAgeIsStoredAndJudgedTheSameFromTheCache() async throws {
        defer { fixture.removeDirectory() }
        serve("gone", ["Cache-Control": "max-age=100"], status: 404)
        let agent = fixture.makeAgent()
        let request = HTTPCachedRequest(url: "/http-cache/gone")
        let first = await agent.finishedTask(request)
        #expect(first.error == .statusCode(404))
        let second = await agent.finishedTask(request)
        #expect(second.error == .statusCode(404))
        #expect(second.isDataFromCache)
        #expect(sent("gone") == 1)

        // Standing in for a failed network or offline, it is still the 404 it was.
        fixture.clock.advance(by: 200)
        server.stop()
        var fallback = request
        fallback.cachePolicy = .offlineFallback
        #expect(await agent.finishedTask(fallback).error == .statusCode(404))
        agent.config.isOffline = true
        #expect(await agent.finishedTask(request).error == .statusCode(404))
    }

    @Test func theConfigurationDecidesForRequestsThatDoNotSay() async throws {
        defer { fixture.removeDirectory() }
        serve("default", ["Cache-Control": "max-age=100"])
        struct Unsaid: BaseRequest {
            var url: String { "/http-cache/default" }
        }
        let agent = fixture.makeAgent { $0.followsHTTPCaching = true }
        _ = try await agent.response(Unsaid())
        #expect(try await agent.response(Unsaid()).isDataFromCache)
        let other = fixture.makeAgent()
        _ = try await other.response(Unsaid())
        #expect(sent("default") == 2, "the default agent does not follow HTTP caching")
    }

    @Test func aPositiveCacheTimeReplacesTheServersLifetime() async throws {
        defer { fixture.removeDirectory() }
        serve("lifetime", ["Cache-Control": "max-age=10"])
        let agent = fixture.makeAgent()
        let request = HTTPCachedRequest(url: "/http-cache/lifetime", cacheTimeInSeconds: 600)
        _ = try await agent.response(request)
        fixture.clock.advance(by: 300)
        #expect(try await agent.response(request).isDataFromCache)
        #expect(sent("lifetime") == 1)
    }
}
