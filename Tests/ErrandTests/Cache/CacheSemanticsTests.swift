import Errand
import Foundation
import Testing

/// YTKNetwork's cache rules, over HTTP to the loopback server.
@Suite("Response cache: what is served")
struct CacheSemanticsTests {
    @Test func missThenHitThenExpiryThenMiss() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let request = CachedRequest(cacheTimeInSeconds: 60)

        #expect(agent.cacheMissReason(request) == .missing)
        let first = try await agent.response(request)
        #expect(!first.isDataFromCache)
        let second = try await agent.response(request)
        #expect(second.isDataFromCache)
        #expect(!second.isStale)

        fixture.clock.advance(by: 60)
        #expect(try await agent.response(request).isDataFromCache, "an entry exactly 60 s old is still valid")
        fixture.clock.advance(by: 1)
        #expect(agent.cacheMissReason(request) == .expired)
        #expect(try await !agent.response(request).isDataFromCache)
        #expect(try await agent.response(request).isDataFromCache, "the fresh response was stored")
    }

    @Test func aRequestThatDoesNotCacheIsNeverServedFromTheCache() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let request = CachedRequest(cacheTimeInSeconds: 0)
        _ = try await agent.response(request)
        #expect(try await !agent.response(request).isDataFromCache)
        #expect(agent.cacheMissReason(request) == .disabled)
        #expect(fixture.entryFiles().isEmpty)
    }

    @Test func ignoreCacheSkipsTheReadButStores() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let request = CachedRequest(arguments: ["n": 1])
        _ = try await agent.response(request)
        fixture.clock.advance(by: 10)
        #expect(try await !agent.response(request, ignoreCache: true).isDataFromCache)
        // The ignored read still stored: the entry is now 0 s old, so 55 s more keep it valid.
        fixture.clock.advance(by: 55)
        #expect(try await agent.response(request).isDataFromCache)
    }

    @Test func startWithoutCacheThenAHit() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let request = CachedRequest()
        let fresh = await withCheckedContinuation { continuation in
            agent.startWithoutCache(
                request, success: { continuation.resume(returning: $0) },
                failure: { continuation.resume(returning: $0) })
        }
        #expect(fresh.error == nil)
        #expect(!fresh.isDataFromCache)
        let cached = await agent.finishedTask(request)
        #expect(cached.isDataFromCache)
        #expect(cached.responseData == fresh.responseData)
    }

    @Test func aHitIsByteForByteTheOriginal() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        for serializer in [ResponseSerializerType.json, .string, .data] {
            var request = CachedRequest(url: "/anything/\(serializer)", arguments: ["text": "ünïcødé ✓"])
            request.responseSerializerType = serializer
            let original = await agent.finishedTask(request)
            let hit = await agent.finishedTask(request)
            #expect(hit.isDataFromCache)
            #expect(hit.responseData == original.responseData)
            #expect(hit.responseString == original.responseString)
            #expect(hit.responseStatusCode == original.responseStatusCode)
            #expect(hit.responseHeaders == original.responseHeaders)
            let originalJSON = try #require(original.responseJSONObject as? [String: Any])
            let hitJSON = try #require(hit.responseJSONObject as? [String: Any])
            #expect(NSDictionary(dictionary: hitJSON).isEqual(to: originalJSON))
        }
        // And after a restart, from disk.
        await agent.waitForCacheWrites()
        let restarted = fixture.makeAgent()
        let fromDisk = try restarted.loadCache(CachedRequest(url: "/anything/data", arguments: ["text": "ünïcødé ✓"]))
        let fromNetwork = try await agent.response(
            CachedRequest(url: "/anything/data", arguments: ["text": "ünïcødé ✓"]), ignoreCache: true)
        #expect(fromDisk.data == fromNetwork.data)
    }

    @Test func aVersionChangeIsAMiss() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        _ = try await agent.response(CachedRequest(cacheVersion: 1))
        #expect(agent.cacheMissReason(CachedRequest(cacheVersion: 1)) == nil)
        #expect(agent.cacheMissReason(CachedRequest(cacheVersion: 2)) == .versionMismatch)
        #expect(try await !agent.response(CachedRequest(cacheVersion: 2)).isDataFromCache)
        #expect(try await agent.response(CachedRequest(cacheVersion: 2)).isDataFromCache)
    }

    @Test func anAppVersionChangeIsAMiss() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent { $0.appVersion = "1.0" }
        _ = try await agent.response(CachedRequest())
        await agent.waitForCacheWrites()
        #expect(fixture.makeAgent { $0.appVersion = "1.0" }.cacheMissReason(CachedRequest()) == nil)
        #expect(fixture.makeAgent { $0.appVersion = "1.1" }.cacheMissReason(CachedRequest()) == .appVersionMismatch)
    }

    @Test(.disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
    func sensitiveDataDecidesWhichEntryIsServed() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        var fromCache: [Bool] = []
        for sensitiveData in ["A", "A", "B", nil, "B", "B"] {
            fromCache.append(try await agent.response(CachedRequest(cacheSensitiveData: sensitiveData)).isDataFromCache)
        }
        #expect(fromCache == [false, true, false, false, false, true])
        #expect(agent.cacheMissReason(CachedRequest(cacheSensitiveData: "A")) == .sensitiveDataMismatch)
        let file = try #require(fixture.entryFiles().first)
        await agent.waitForCacheWrites()
        #expect(!String(decoding: try Data(contentsOf: file), as: UTF8.self).contains("\"B\""))
    }

    @Test func expiryIsReportedBeforeAVersionMismatch() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: CachedRequest(cacheVersion: 1))
        fixture.clock.advance(by: 61)
        #expect(agent.cacheMissReason(CachedRequest(cacheVersion: 2)) == .expired)
    }

    @Test func oneResponseSavedIntoOtherRequestsSlots() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let list = try await agent.response(CachedRequest(url: "/anything/items"))
        for id in 1...3 {
            try await agent.saveCache(list, for: CachedRequest(url: "/anything/items/\(id)"))
        }
        for id in 1...3 {
            let item = try await agent.response(CachedRequest(url: "/anything/items/\(id)"))
            #expect(item.isDataFromCache)
            #expect(item.data == list.data)
        }
        #expect(agent.cacheMissReason(CachedRequest(url: "/anything/items/4")) == .missing)
        // A request that does not cache gets no entry.
        try await agent.saveCache(list, for: CachedRequest(url: "/anything/items/5", cacheTimeInSeconds: -1))
        #expect(agent.cacheMissReason(CachedRequest(url: "/anything/items/5")) == .missing)
    }

    @Test(.disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
    func tokensStrippedFromTheKeyShareOneEntry() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        func request(token: String, page: Int) -> CachedRequest {
            CachedRequest(arguments: ["token": token, "page": page], argumentsOutsideKey: ["token"])
        }
        #expect(try await !agent.response(request(token: "t1", page: 1)).isDataFromCache)
        #expect(try await agent.response(request(token: "t2", page: 1)).isDataFromCache)
        #expect(try await !agent.response(request(token: "t2", page: 2)).isDataFromCache)
        await agent.waitForCacheWrites()
        #expect(fixture.entryFiles().count == 2)
    }

    @Test func equalArgumentsShareAKeyWhateverTheirOrder() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        var first: [String: any Sendable] = [:]
        var second: [String: any Sendable] = [:]
        for index in 0..<20 { first["k\(index)"] = index }
        for index in (0..<20).reversed() { second["k\(index)"] = index }
        _ = try await agent.response(CachedRequest(arguments: first))
        #expect(agent.cacheMissReason(CachedRequest(arguments: second)) == nil)
        #expect(agent.cacheMissReason(CachedRequest(arguments: ["k0": 1])) == .missing)
    }

    @Test func theBaseURLIsPartOfTheKey() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: CachedRequest())
        let other = fixture.makeAgent { $0.baseUrl = "http://other.invalid" }
        #expect(other.cacheMissReason(CachedRequest()) == .missing)
    }

    @Test func headersSplitTheCacheOnlyWhenNamed() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let english = CachedRequest(headers: ["Accept-Language": "en"])
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: english)
        #expect(agent.cacheMissReason(CachedRequest(headers: ["Accept-Language": "fr"])) == nil)
        let varying = CachedRequest(headers: ["Accept-Language": "en"], cacheKeyHeaders: ["accept-language"])
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: varying)
        #expect(agent.cacheMissReason(varying) == nil)
        #expect(
            agent.cacheMissReason(
                CachedRequest(headers: ["Accept-Language": "fr"], cacheKeyHeaders: ["Accept-Language"]))
                == .missing)
    }

    @Test func failedResponsesAreNotStored() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let task = await agent.finishedTask(CachedRequest(url: "/status/500"))
        #expect(task.error == .statusCode(500))
        #expect(agent.cacheMissReason(CachedRequest(url: "/status/500")) == .missing)
        #expect(fixture.entryFiles().isEmpty)
    }

    @Test func accessoriesAndClosuresRunForHitsAsForTheNetwork() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let log = EventLog()
        let request = CachedRequest(requestAccessories: [LoggingAccessory(log: log, name: "a")])
        _ = await agent.finishedTask(request)
        // The first request's `didStop` follows its success callback: wait for it, or it may land
        // among the hit's events.
        await log.waitFor(count: 3)
        let hit = await withCheckedContinuation { continuation in
            agent.start(
                request,
                success: {
                    log.append("success")
                    continuation.resume(returning: $0)
                }, failure: { continuation.resume(returning: $0) })
        }
        await log.waitFor(count: 7)
        #expect(hit.isDataFromCache)
        #expect(log.events.suffix(4) == ["a willStart", "a willStop", "success", "a didStop"])
        #expect(hit.description.contains("served from the cache"))
    }

    @Test func aDelegateIsToldOfAHit() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        _ = try await agent.response(CachedRequest())
        let delegate = await MainActor.run { RecordingDelegate() }
        let task = agent.start(CachedRequest(), delegate: delegate)
        let finished = await delegate.finished()
        #expect(finished === task)
        #expect(task.isDataFromCache)
    }

    @Test(.disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
    func removeAndClear() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let body = Response(statusCode: 200, data: Data("{}".utf8))
        try await agent.saveCache(body, for: CachedRequest(url: "/a"))
        try await agent.saveCache(body, for: CachedRequest(url: "/b"))
        try await agent.removeCache(CachedRequest(url: "/a"))
        #expect(agent.cacheMissReason(CachedRequest(url: "/a")) == .missing)
        #expect(agent.cacheMissReason(CachedRequest(url: "/b")) == nil)
        #expect(fixture.entryFiles().count == 1)
        await agent.clearCache()
        #expect(agent.cacheMissReason(CachedRequest(url: "/b")) == .missing)
        #expect(fixture.entryFiles().isEmpty)
    }
}

/// Counts delegate calls on the main actor and lets a test await the first success.
@MainActor
final class RecordingDelegate: RequestDelegate {
    private var task: RequestTask?
    private var waiter: CheckedContinuation<RequestTask, Never>?

    func requestFinished(_ task: RequestTask) {
        self.task = task
        waiter?.resume(returning: task)
        waiter = nil
    }

    func requestFailed(_ task: RequestTask) {
        Issue.record("the request failed: \(String(describing: task.error))")
    }

    func finished() async -> RequestTask {
        if let task { return task }
        return await withCheckedContinuation { waiter = $0 }
    }
}
