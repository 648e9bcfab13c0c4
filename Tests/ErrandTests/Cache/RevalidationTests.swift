import Errand
import ErrandTestServer
import Foundation
import Testing

/// An expired entry with a validator is asked about, not downloaded again: `304 Not Modified`
/// serves the stored body with the 304's fields, and the entry's age starts again.
@Suite("Response cache: revalidating expired entries")
struct RevalidationTests {
    let server: TestServer
    let fixture: CacheFixture

    init() throws {
        server = try TestServer()
        fixture = try CacheFixture(baseURL: server.baseURL)
    }

    static let firstBody = #"{"v":1}"#

    /// `/http-cache/{name}` as a caching request, cached for a minute.
    static func request(_ name: String, policy: CachePolicy = .standard) -> CachedRequest {
        CachedRequest(url: "/http-cache/\(name)", cacheTimeInSeconds: 60, cachePolicy: policy)
    }

    /// The validators `name`'s requests carried, in order: `If-None-Match`, else `If-Modified-Since`, else "-".
    func conditions(_ name: String) -> [String] {
        server.receivedRequests(path: "/http-cache/\(name)").map {
            $0.header("If-None-Match") ?? $0.header("If-Modified-Since") ?? "-"
        }
    }

    @Test func anExpiredEntryWithAnETagIsAskedAboutAndA304ServesTheStoredBody() async throws {
        defer { fixture.removeDirectory() }
        server.setCacheableResource(
            "etag", CacheableResource(body: Self.firstBody, etag: #""v1""#, headers: ["X-Served": "full"]))
        let agent = fixture.makeAgent()
        let first = try await agent.response(Self.request("etag"))
        #expect(!first.isRevalidated)
        #expect(first.age == nil, "straight from the network")
        fixture.clock.advance(by: 61)

        let revalidated = try await agent.response(Self.request("etag"))
        #expect(conditions("etag") == ["-", #""v1""#])
        #expect(server.cacheableAnswers("etag") == (full: 1, notModified: 1))
        #expect(revalidated.isRevalidated)
        #expect(!revalidated.isDataFromCache, "the server was asked")
        #expect(!revalidated.isStale)
        #expect(revalidated.statusCode == 200, "the stored status, not 304")
        #expect(revalidated.age == 0)
        #expect(revalidated.string == Self.firstBody)
        #expect(revalidated.value(forHeader: "Content-Type") == "text/plain; charset=utf-8")

        // The entry's age started again: a minute later it is still fresh, and no request goes out.
        fixture.clock.advance(by: 59)
        let cached = try await agent.response(Self.request("etag"))
        #expect(cached.isDataFromCache)
        #expect(!cached.isRevalidated)
        #expect(cached.age == 59)
        #expect(cached.string == Self.firstBody)
        #expect(conditions("etag").count == 2)
    }

    @Test func withoutAnETagLastModifiedIsTheValidator() async throws {
        defer { fixture.removeDirectory() }
        let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
        server.setCacheableResource("dated", CacheableResource(body: Self.firstBody, lastModified: lastModified))
        let agent = fixture.makeAgent()
        _ = try await agent.response(Self.request("dated"))
        fixture.clock.advance(by: 61)
        let revalidated = try await agent.response(Self.request("dated"))
        #expect(conditions("dated") == ["-", lastModified])
        #expect(revalidated.isRevalidated)
        #expect(revalidated.string == Self.firstBody)
    }

    @Test func the304sFieldsReplaceTheStoredOnesButNotTheBodysFraming() async throws {
        defer { fixture.removeDirectory() }
        server.setCacheableResource(
            "merge",
            CacheableResource(
                body: Self.firstBody, etag: #""v1""#, headers: ["X-Kept": "stored"],
                notModifiedHeaders: [
                    "X-Version": "2", "Content-Length": "999", "Connection": "keep-alive, X-Hop", "X-Hop": "1",
                ]))
        let agent = fixture.makeAgent()
        _ = try await agent.response(Self.request("merge"))
        fixture.clock.advance(by: 61)
        let revalidated = try await agent.response(Self.request("merge"))
        #expect(revalidated.value(forHeader: "X-Version") == "2")
        #expect(revalidated.value(forHeader: "X-Kept") == "stored")
        #expect(revalidated.value(forHeader: "Content-Length") == String(Self.firstBody.utf8.count))
        #expect(revalidated.value(forHeader: "X-Hop") == nil, "named in the 304's Connection field")
        // And so it is stored.
        #expect(try agent.loadCache(Self.request("merge")).value(forHeader: "X-Version") == "2")
    }

    @Test func aChangedResourceAnswersInFullAndReplacesTheEntry() async throws {
        defer { fixture.removeDirectory() }
        server.setCacheableResource("changed", CacheableResource(body: Self.firstBody, etag: #""v1""#))
        let agent = fixture.makeAgent()
        _ = try await agent.response(Self.request("changed"))
        server.setCacheableResource("changed", CacheableResource(body: #"{"v":2}"#, etag: #""v2""#))
        fixture.clock.advance(by: 61)
        let fresh = try await agent.response(Self.request("changed"))
        #expect(conditions("changed") == ["-", #""v1""#])
        #expect(!fresh.isRevalidated)
        #expect(fresh.string == #"{"v":2}"#)
        #expect(try agent.loadCache(Self.request("changed")).value(forHeader: "ETag") == #""v2""#)
    }

    @Test func aCallersOwnConditionGoesOutUntouchedAndItsAnswerIsTheCallers() async throws {
        defer { fixture.removeDirectory() }
        server.setCacheableResource("own", CacheableResource(body: Self.firstBody, etag: #""v1""#))
        let agent = fixture.makeAgent()
        _ = try await agent.response(Self.request("own"))
        fixture.clock.advance(by: 61)
        var request = Self.request("own")
        request.headers = ["If-None-Match": #""mine", "v1""#]
        let task = await agent.finishedTask(request)
        #expect(conditions("own") == ["-", #""mine", "v1""#])
        #expect(task.response?.statusCode == 304)
        #expect(task.response?.isRevalidated == false)
    }

    @Test func anEntryWithoutAValidatorIsDownloadedAgain() async throws {
        defer { fixture.removeDirectory() }
        server.setCacheableResource("plain", CacheableResource(body: Self.firstBody))
        let agent = fixture.makeAgent()
        _ = try await agent.response(Self.request("plain"))
        fixture.clock.advance(by: 61)
        let again = try await agent.response(Self.request("plain"))
        #expect(conditions("plain") == ["-", "-"])
        #expect(!again.isRevalidated)
    }

    @Test func anEntryOfAnotherCacheVersionIsNotAskedAbout() async throws {
        defer { fixture.removeDirectory() }
        server.setCacheableResource("versioned", CacheableResource(body: Self.firstBody, etag: #""v1""#))
        let agent = fixture.makeAgent()
        _ = try await agent.response(Self.request("versioned"))
        fixture.clock.advance(by: 61)
        var request = Self.request("versioned")
        request.cacheVersion = 2
        _ = try await agent.response(request)
        #expect(conditions("versioned") == ["-", "-"])
    }

    @Test func staleWhileRevalidateRefreshesWithACondition() async throws {
        defer { fixture.removeDirectory() }
        server.setCacheableResource("background", CacheableResource(body: Self.firstBody, etag: #""v1""#))
        let refreshed = Callback()
        var request = Self.request("background", policy: .staleWhileRevalidate)
        request.requestAccessories = [
            StopObserver { task in
                guard !task.isDataFromCache else { return }
                refreshed.record(task, succeeded: task.error == nil && task.response?.isRevalidated == true)
            }
        ]
        let agent = fixture.makeAgent()
        _ = try await agent.response(Self.request("background"))
        fixture.clock.advance(by: 61)

        let stale = try await agent.response(request)
        #expect(stale.isStale)
        #expect(await refreshed.outcome().succeeded, "refreshed by a 304")
        #expect(conditions("background") == ["-", #""v1""#])
        let fresh = try await agent.response(Self.request("background"))
        #expect(fresh.isDataFromCache && !fresh.isStale, "the 304 restarted the entry's age")
    }

    @Test func offlineFallbackServesTheExpiredEntryWhenTheRevalidationCannotBeSent() async throws {
        defer { fixture.removeDirectory() }
        server.setCacheableResource("offline", CacheableResource(body: Self.firstBody, etag: #""v1""#))
        let agent = fixture.makeAgent()
        _ = try await agent.response(Self.request("offline", policy: .offlineFallback))
        fixture.clock.advance(by: 120)
        server.stop()
        let stale = try await agent.response(Self.request("offline", policy: .offlineFallback))
        #expect(stale.isDataFromCache && stale.isStale && !stale.isRevalidated)
        #expect(stale.age == 120)
        #expect(stale.string == Self.firstBody)
    }

    @Test func cacheThenNetworkAsksWithTheShownEntrysValidator() async throws {
        defer { fixture.removeDirectory() }
        server.setCacheableResource("shown", CacheableResource(body: Self.firstBody, etag: #""v1""#))
        let agent = fixture.makeAgent()
        _ = try await agent.response(Self.request("shown"))
        var responses: [Response] = []
        for try await response in agent.cacheThenNetwork(Self.request("shown")) {
            responses.append(response)
        }
        #expect(responses.map(\.isDataFromCache) == [true, false])
        #expect(responses.last?.isRevalidated == true)
        #expect(responses.last?.string == Self.firstBody)
        #expect(conditions("shown") == ["-", #""v1""#])
    }
}
