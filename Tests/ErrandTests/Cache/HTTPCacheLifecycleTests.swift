import Errand
import ErrandTestServer
import Foundation
import Testing

/// What happens to a stored response after it is stored, section by section: invalidation by
/// unsafe methods (RFC 9111 §4.4), freshening by `HEAD` (§4.3.5), serving it stale (§4.2.4 and
/// RFC 5861), and `immutable` (RFC 8246).
@Suite("Response cache: an HTTP cache's entries after they are stored")
struct HTTPCacheLifecycleTests {
    let server: TestServer
    let fixture: CacheFixture

    init() throws {
        server = try TestServer()
        fixture = try CacheFixture(baseURL: server.baseURL)
    }

    func serve(_ name: String, _ headers: [String: String], etag: String? = nil, status: Int = 200) {
        server.setCacheableResource(
            name, CacheableResource(status: status, body: HTTPCachingTests.body, etag: etag, headers: headers))
    }

    /// Full answers `/http-cache/{name}` gave to GET and HEAD.
    func downloads(_ name: String) -> Int {
        server.cacheableAnswers(name).full
    }

    func request(_ name: String, _ method: HTTPMethod = .get, headers: [String: String] = [:]) -> HTTPCachedRequest {
        HTTPCachedRequest(url: "/http-cache/\(name)", method: method, headers: headers)
    }

    // MARK: §4.4 Invalidating stored responses

    @Test(arguments: [HTTPMethod.post, .put, .delete, .patch])
    func aSuccessfulUnsafeMethodInvalidatesItsURL(_ method: HTTPMethod) async throws {
        defer { fixture.removeDirectory() }
        serve("item", ["Cache-Control": "max-age=600"])
        let agent = fixture.makeAgent()
        _ = try await agent.response(request("item"))
        #expect(try await agent.response(request("item")).isDataFromCache)

        let change = try await agent.response(request("item", method))
        #expect(change.statusCode == 204)
        #expect(!change.isDataFromCache, "an unsafe method is never answered from a GET's entry")
        #expect(try await !agent.response(request("item")).isDataFromCache)
        #expect(downloads("item") == 2)
    }

    @Test func anInvalidationRemovesEveryVariant() async throws {
        defer { fixture.removeDirectory() }
        serve("variants", ["Cache-Control": "max-age=600", "Vary": "Accept-Language"])
        let agent = fixture.makeAgent()
        let languages = ["en", "fr"]
        for language in languages {
            _ = try await agent.response(request("variants", headers: ["Accept-Language": language]))
        }
        _ = try await agent.response(request("variants", .put))
        for language in languages {
            let again = try await agent.response(request("variants", headers: ["Accept-Language": language]))
            #expect(!again.isDataFromCache, "\(language) was invalidated")
        }
        #expect(downloads("variants") == 4)
    }

    @Test(arguments: [404, 500])
    func anErrorAnswerInvalidatesNothing(_ status: Int) async throws {
        defer { fixture.removeDirectory() }
        serve("kept", ["Cache-Control": "max-age=600"])
        let agent = fixture.makeAgent()
        _ = try await agent.response(request("kept"))
        let refused = await agent.finishedTask(request("kept", .post, headers: ["Answer-Status": "\(status)"]))
        #expect(refused.error == .statusCode(status))
        #expect(try await agent.response(request("kept")).isDataFromCache)
        #expect(downloads("kept") == 1)
    }

    @Test func theLocationsAnAnswerNamesOnItsOriginAreInvalidatedToo() async throws {
        defer { fixture.removeDirectory() }
        for name in ["created", "described", "elsewhere"] { serve(name, ["Cache-Control": "max-age=600"]) }
        let agent = fixture.makeAgent()
        for name in ["created", "described", "elsewhere"] { _ = try await agent.response(request(name)) }

        _ = try await agent.response(
            request(
                "list", .post,
                headers: [
                    "Answer-Status": "201", "Answer-Location": "created#top",
                    "Answer-Content-Location": "\(server.baseURL)/http-cache/described",
                ]))
        #expect(try await !agent.response(request("created")).isDataFromCache, "relative to the request's URL")
        #expect(try await !agent.response(request("described")).isDataFromCache, "absolute, same origin")
        #expect(try await agent.response(request("elsewhere")).isDataFromCache, "not named")
    }

    @Test func theURLFiltersDoNotSplitTheEntryNorHideItFromInvalidation() async throws {
        defer { fixture.removeDirectory() }
        serve("filtered", ["Cache-Control": "max-age=600"])
        let agent = fixture.makeAgent { $0.addUrlFilter(CacheURLFilterTests.TokenFilter()) }
        _ = try await agent.response(request("filtered"))
        #expect(try await agent.response(request("filtered")).isDataFromCache, "a new token each time")
        _ = try await agent.response(request("filtered", .delete))
        #expect(try await !agent.response(request("filtered")).isDataFromCache)
        #expect(server.receivedRequests(path: "/http-cache/filtered").allSatisfy { $0.query.hasPrefix("token=") })
    }

    // MARK: §4.3.5 Freshening with HEAD

    @Test func aHeadIsAnsweredByTheStoredGetWithoutItsBody() async throws {
        defer { fixture.removeDirectory() }
        serve("head", ["Cache-Control": "max-age=600", "X-Version": "1"])
        let agent = fixture.makeAgent()
        _ = try await agent.response(request("head"))
        let head = try await agent.response(request("head", .head))
        #expect(head.isDataFromCache)
        #expect(head.data.isEmpty)
        #expect(head.value(forHeader: "X-Version") == "1")
        #expect(server.receivedRequests(path: "/http-cache/head").count == 1)
    }

    @Test func aHeadAnswerFreshensTheStoredGetItDescribes() async throws {
        defer { fixture.removeDirectory() }
        // No validator: the HEAD goes out unconditional, and its 200 describes the same length.
        serve("freshen", ["Cache-Control": "max-age=10"])
        let agent = fixture.makeAgent()
        _ = try await agent.response(request("freshen"))
        fixture.clock.advance(by: 20)
        serve("freshen", ["Cache-Control": "max-age=600", "X-Version": "2"])
        let head = try await agent.response(request("freshen", .head))
        #expect(!head.isDataFromCache)

        let get = try await agent.response(request("freshen"))
        #expect(get.isDataFromCache && !get.isStale, "fresh for another 600 s")
        #expect(get.value(forHeader: "X-Version") == "2")
        #expect(get.data == Data(HTTPCachingTests.body.utf8))
        #expect(downloads("freshen") == 2, "the GET, then the HEAD")
    }

    @Test func aHeadAnswerShowingAnotherBodyRetiresTheStoredGet() async throws {
        defer { fixture.removeDirectory() }
        serve("changed", ["Cache-Control": "max-age=10"], etag: #""e1""#)
        let agent = fixture.makeAgent()
        _ = try await agent.response(request("changed"))
        fixture.clock.advance(by: 20)
        serve("changed", ["Cache-Control": "max-age=600"], etag: #""e2""#)
        _ = try await agent.response(request("changed", .head))

        let get = try await agent.response(request("changed"))
        #expect(!get.isDataFromCache && !get.isRevalidated)
        #expect(server.receivedRequests(path: "/http-cache/changed").last?.header("If-None-Match") == nil)
    }

    // MARK: RFC 9110 §14.2: a range of a stored response

    @Test func aRangeOfAFreshEntryIsCutFromIt() async throws {
        defer { fixture.removeDirectory() }
        serve("range", ["Cache-Control": "max-age=600"])
        let agent = fixture.makeAgent()
        _ = try await agent.response(request("range"))
        let part = try await agent.response(request("range", headers: ["Range": "bytes=1-3"]))
        #expect(part.isDataFromCache)
        #expect(part.statusCode == 206)
        #expect(part.data == Data(HTTPCachingTests.body.utf8)[1...3])
        #expect(downloads("range") == 1)
    }

    @Test func aRangeOfAStoredBodyThatIsASliceIsCutFromTheSlice() async throws {
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let buffer = Data("header:0123456789".utf8)
        let saved = Response(statusCode: 200, headers: ["Cache-Control": "max-age=600"], data: buffer[7...])
        try await agent.saveCache(saved, for: request("sliced"))
        let part = try await agent.response(request("sliced", headers: ["Range": "bytes=2-4"]))
        #expect(part.isDataFromCache && part.statusCode == 206)
        #expect(part.data == Data("234".utf8))
        #expect(part.value(forHeader: "Content-Range") == "bytes 2-4/10")
    }

    // MARK: §4.2.4 and RFC 5861: serving stale responses

    @Test func staleWhileRevalidateAnswersAtOnceWithinItsWindowOnly() async throws {
        defer { fixture.removeDirectory() }
        serve("swr", ["Cache-Control": "max-age=10, stale-while-revalidate=30"], etag: #""e1""#)
        let agent = fixture.makeAgent()
        let refreshed = Callback()
        var swr = request("swr")
        swr.requestAccessories = [
            StopObserver { task in if !task.isDataFromCache { refreshed.record(task, succeeded: task.error == nil) } }
        ]
        _ = try await agent.response(request("swr"))
        fixture.clock.advance(by: 25)
        let stale = try await agent.response(swr)
        #expect(stale.isDataFromCache && stale.isStale)
        #expect(await refreshed.outcome().succeeded)
        #expect(server.cacheableAnswers("swr") == (full: 1, notModified: 1), "refreshed in the background")

        fixture.clock.advance(by: 15)
        let asking = try await agent.response(request("swr", headers: ["Cache-Control": "no-cache"]))
        #expect(asking.isRevalidated, "a request that asks for validation is not answered stale")
        fixture.clock.advance(by: 50)
        let late = try await agent.response(request("swr"))
        #expect(!late.isDataFromCache && late.isRevalidated, "40 s stale is past the window: asked first")
    }

    @Test func staleIfErrorStandsInForAServerErrorAndAFailedNetworkWithinItsWindow() async throws {
        defer { fixture.removeDirectory() }
        serve("sie", ["Cache-Control": "max-age=10, stale-if-error=60"])
        let agent = fixture.makeAgent()
        _ = try await agent.response(request("sie"))
        fixture.clock.advance(by: 30)
        serve("sie", [:], status: 503)
        let instead = await agent.finishedTask(request("sie"))
        #expect(instead.error == nil)
        #expect(instead.isDataFromCache && instead.response?.isStale == true)

        server.stop()
        let offline = await agent.finishedTask(request("sie"))
        #expect(offline.error == nil && offline.isDataFromCache)

        fixture.clock.advance(by: 60)
        #expect(await agent.finishedTask(request("sie")).error?.isTransport == true, "past the window")
    }

    @Test func aServerErrorWithALifetimeIsStoredOnlyWhereNoResponseIs() async throws {
        defer { fixture.removeDirectory() }
        serve("outage", ["Cache-Control": "max-age=10"], etag: #""e1""#)
        let agent = fixture.makeAgent()
        _ = try await agent.response(request("outage"))
        fixture.clock.advance(by: 20)
        serve("outage", ["Cache-Control": "max-age=600"], status: 503)
        #expect(await agent.finishedTask(request("outage")).error == .statusCode(503))
        var fallback = request("outage")
        fallback.cachePolicy = .offlineFallback
        server.stop()
        let kept = await agent.finishedTask(fallback)
        #expect(kept.error == nil && kept.isDataFromCache, "the 503 did not replace the stored 200")

        let fresh = try TestServer()
        let other = try CacheFixture(baseURL: fresh.baseURL)
        defer { other.removeDirectory() }
        fresh.setCacheableResource(
            "down", CacheableResource(status: 503, body: "{}", headers: ["Cache-Control": "max-age=600"]))
        let nothingStored = other.makeAgent()
        _ = await nothingStored.finishedTask(HTTPCachedRequest(url: "/http-cache/down"))
        let again = await nothingStored.finishedTask(HTTPCachedRequest(url: "/http-cache/down"))
        #expect(again.error == .statusCode(503) && again.isDataFromCache, "stored where nothing was")
    }

    @Test(arguments: ["must-revalidate", "no-cache"])
    func whatTheServerWantsRevalidatedIsNeverServedStale(_ directive: String) async throws {
        defer { fixture.removeDirectory() }
        serve("strict", ["Cache-Control": "max-age=10, stale-while-revalidate=60, \(directive)"])
        let agent = fixture.makeAgent()
        var fallback = request("strict")
        fallback.cachePolicy = .offlineFallback
        _ = try await agent.response(fallback)
        fixture.clock.advance(by: 30)
        server.stop()
        #expect(await agent.finishedTask(fallback).error?.isTransport == true)

        agent.config.isOffline = true
        #expect(await agent.finishedTask(fallback).error == .cacheMiss(.expired))
    }

    // MARK: §4.3.4 Freshening stored responses upon validation

    @Test func a304ArrivingAfterAnotherRequestStoredANewerBodyLeavesOneWholeEntry() async throws {
        let transport = ManualTransport()
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent(transport: transport)
        var request = HTTPCachedRequest(url: "/item")
        request.responseSerializerType = .data
        func version(_ name: String) -> [String: String] { ["Cache-Control": "max-age=10", "ETag": "\"\(name)\""] }
        let first = Task { try await agent.response(request) }
        try await eventually { transport.sent.count == 1 }
        transport.sent[0].respond(headers: version("v1"), body: "v1")
        _ = try await first.value
        fixture.clock.advance(by: 20)

        // One request asks about v1; meanwhile another, not reading the cache, stores v2.
        let asking = Task { try await agent.response(request) }
        try await eventually { transport.sent.count == 2 }
        #expect(transport.sent[1].request.headers["If-None-Match"] == #""v1""#)
        let replacing = Callback()
        agent.startWithoutCache(request) { replacing.record($0, succeeded: true) }
        try await eventually { transport.sent.count == 3 }
        transport.sent[2].respond(headers: version("v2"), body: "v2")
        _ = await replacing.outcome()
        transport.sent[1].respond(status: 304, headers: version("v1"), body: "")
        #expect(try await asking.value.data == Data("v1".utf8))

        await agent.waitForCacheWrites()
        for reader in [agent, fixture.makeAgent(transport: transport)] {
            let entry = try reader.loadCache(request, allowingExpired: true)
            let body = String(decoding: entry.data, as: UTF8.self)
            #expect(entry.value(forHeader: "ETag") == "\"\(body)\"", "the body and its validator are one version's")
        }
    }

    // MARK: RFC 8246 immutable

    @Test func aFreshImmutableEntryIsNotRevalidatedOnReloadOnlyOnNoCache() async throws {
        defer { fixture.removeDirectory() }
        serve("immutable", ["Cache-Control": "max-age=600, immutable"], etag: #""e1""#)
        let agent = fixture.makeAgent()
        _ = try await agent.response(request("immutable"))
        fixture.clock.advance(by: 5)
        let reload = try await agent.response(request("immutable", headers: ["Cache-Control": "max-age=0"]))
        #expect(reload.isDataFromCache)
        let forced = try await agent.response(request("immutable", headers: ["Cache-Control": "no-cache"]))
        #expect(forced.isRevalidated)
    }
}
