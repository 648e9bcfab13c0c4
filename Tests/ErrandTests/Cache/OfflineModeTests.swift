import Errand
import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

/// Offline mode: answers from the cache alone, whatever the entry's age, never the network.
@Suite("Response cache: offline mode")
struct OfflineModeTests {
    /// An agent on a transport the test answers by hand, whose cache holds `{"v":1}` for
    /// `CachedRequest()`, expired a minute ago.
    static func agentWithAnExpiredEntry() throws -> (CacheFixture, ManualTransport, NetworkAgent, CachedRequest) {
        let transport = ManualTransport()
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        let agent = fixture.makeAgent(transport: transport)
        let request = CachedRequest()
        try agent.saveCacheSync(Response(statusCode: 200, data: Data(#"{"v":1}"#.utf8)), for: request)
        fixture.clock.advance(by: 120)
        return (fixture, transport, agent, request)
    }

    @Test func offlineModeAnswersFromAnExpiredEntryWithoutTheNetwork() async throws {
        let server = try TestServer()
        let fixture = try CacheFixture(baseURL: server.baseURL)
        defer { fixture.removeDirectory() }
        let request = CachedRequest(cacheTimeInSeconds: CacheLifetime.minute)
        let online = fixture.makeAgent()
        let original = try await online.response(request)
        await online.waitForCacheWrites()
        fixture.clock.advance(by: Double(CacheLifetime.day))
        server.stop()

        // A relaunched app, offline: the entry comes from disk.
        let transport = CountingTransport()
        let agent = fixture.makeAgent(transport: transport) { $0.isOffline = true }
        // Never the network (the transport's count below), so never a wait for a connection.
        let response = try await agent.response(request)
        #expect(response.isStale)
        #expect(response.data == original.data)

        let task = await agent.finishedTask(request)
        #expect(task.error == nil)
        #expect(task.isDataFromCache)
        #expect(task.response?.isStale == true)
        #expect(transport.count == 0, "offline mode never hands a request to the transport")
        #expect(agent.cacheMissReason(request) == .expired, "the entry is kept")
    }

    @Test func theConfigSwitchAppliesToRequestsStartedAfterIt() async throws {
        let (fixture, transport, agent, request) = try Self.agentWithAnExpiredEntry()
        defer { fixture.removeDirectory() }

        // Started online: it is on the wire when the switch flips, and finishes from the network.
        let fresh = agent.start(request)
        let sent = try #require(transport.sent.first, "sent as it starts")
        agent.config.isOffline = true
        sent.respond(body: #"{"v":2}"#)
        _ = try? await fresh.value
        #expect(fresh.error == nil)
        #expect(!fresh.isDataFromCache)

        let offline = await agent.finishedTask(request)
        #expect(offline.isDataFromCache)
        #expect(offline.responseData == Data(#"{"v":2}"#.utf8), "the online response replaced the entry")
        #expect(transport.sent.count == 1)

        fixture.clock.advance(by: 120)
        let stale = await agent.finishedTask(request)
        #expect(stale.response?.isStale == true)
        #expect(transport.sent.count == 1)

        agent.config.isOffline = false
        let online = agent.start(request)
        #expect(transport.sent.count == 2)
        transport.sent.last?.respond(body: #"{"v":3}"#)
        _ = try? await online.value
        #expect(online.error == nil)
        #expect(!online.isDataFromCache)
    }

    @Test func cacheOnlyPolicyIsOfflineModeForOneRequest() async throws {
        let transport = ManualTransport()
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent(transport: transport)
        let request = CachedRequest(cachePolicy: .cacheOnly)
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: request)
        fixture.clock.advance(by: Double(CacheLifetime.year))

        let task = await agent.finishedTask(request)
        #expect(task.error == nil)
        #expect(task.response?.isStale == true)
        // Skipping the cache read still never reaches the network.
        let withoutCache = try await agent.response(request, ignoreCache: true)
        #expect(withoutCache.isDataFromCache)
        #expect(transport.sent.isEmpty)
    }

    @Test func offlineModeWithoutAnEntryIsACacheMiss() async throws {
        let transport = ManualTransport()
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent(transport: transport) { $0.isOffline = true }

        #expect(await agent.finishedTask(CachedRequest()).error == .cacheMiss(.missing))
        // Requests that do not cache fail at once rather than wait for a network that is not used.
        #expect(await agent.finishedTask(CachedRequest(cacheTimeInSeconds: -1)).error == .cacheMiss(.disabled))
        let upload = UploadRequest(url: "/upload", uploadBody: .data(Data("x".utf8)))
        #expect(await agent.finishedTask(upload).error == .cacheMiss(.disabled))
        #expect(transport.sent.isEmpty)
    }

    @Test func offlineModeStillRefusesAnotherVersionsOrAccountsEntry() async throws {
        let transport = ManualTransport()
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent(transport: transport) { $0.isOffline = true }
        let stored = CachedRequest(cacheVersion: 1, cacheSensitiveData: "ann")
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: stored)
        fixture.clock.advance(by: 3600)

        #expect(await agent.finishedTask(stored).error == nil)
        #expect(
            await agent.finishedTask(CachedRequest(cacheVersion: 2, cacheSensitiveData: "ann")).error
                == .cacheMiss(.versionMismatch))
        #expect(
            await agent.finishedTask(CachedRequest(cacheVersion: 1, cacheSensitiveData: "bob")).error
                == .cacheMiss(.sensitiveDataMismatch))
        agent.config.appVersion = "2.0"
        #expect(await agent.finishedTask(stored).error == .cacheMiss(.appVersionMismatch))
        #expect(transport.sent.isEmpty)
    }

    @Test func failedRequestsAndExpiryKeepTheEntryOfflineModeServes() async throws {
        let (fixture, transport, agent, request) = try Self.agentWithAnExpiredEntry()
        defer { fixture.removeDirectory() }
        #expect(agent.cacheMissReason(request) == .expired)

        let serverError = agent.start(request)
        try #require(transport.sent.count == 1, "sent as it starts")
        transport.sent[0].respond(status: 500)
        _ = try? await serverError.value
        #expect(serverError.error == .statusCode(500))
        let dropped = agent.start(request)
        try #require(transport.sent.count == 2, "sent as it starts")
        transport.sent[1].events(.completed(.transport(URLError(.networkConnectionLost))))
        _ = try? await dropped.value
        #expect(dropped.error?.isTransport == true)

        // A new agent reads the file: nothing deleted it.
        await agent.waitForCacheWrites()
        let relaunched = fixture.makeAgent(transport: transport) { $0.isOffline = true }
        let offline = try await relaunched.response(request)
        #expect(offline.data == Data(#"{"v":1}"#.utf8))
        #expect(offline.isStale)
    }

    @Test func loadCacheAllowingExpiredReadsAnExpiredEntry() async throws {
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent(transport: ManualTransport())
        let request = CachedRequest()
        try await agent.saveCache(Response(statusCode: 200, data: Data(#"{"v":1}"#.utf8)), for: request)
        #expect(try agent.loadCache(request, allowingExpired: true).isStale == false)

        fixture.clock.advance(by: 120)
        #expect(agent.cacheMissReason(request) == .expired, "plain loadCache() is unchanged")
        let expired = try agent.loadCache(request, allowingExpired: true)
        #expect(expired.isStale)
        #expect(expired.isDataFromCache)
        #expect(expired.data == Data(#"{"v":1}"#.utf8))
        #expect(throws: ErrandError.cacheMiss(.versionMismatch)) {
            try agent.loadCache(CachedRequest(cacheVersion: 3), allowingExpired: true)
        }
        #expect(throws: ErrandError.cacheMiss(.missing)) {
            try agent.loadCache(CachedRequest(url: "/anything/other"), allowingExpired: true)
        }
    }

    @Test func namedLifetimes() {
        #expect(CacheLifetime.minute == 60)
        #expect(CacheLifetime.hour == 3_600)
        #expect(CacheLifetime.day == 86_400)
        #expect(CacheLifetime.week == 604_800)
        #expect(CacheLifetime.month == 2_592_000)
        #expect(CacheLifetime.year == 31_536_000)
    }
}

/// Arguments a URL filter adds — tokens, app-wide parameters — are not part of the cache key.
@Suite("Response cache: URL filters")
struct CacheURLFilterTests {
    /// Appends a token that changes on every call, as a session token refreshed between requests.
    final class TokenFilter: URLFilter, @unchecked Sendable {  // Sendable because `lock` guards `calls`.
        private let lock = NSLock()
        private var calls = 0

        func filterUrl(_ originUrl: String, request: any BaseRequest) -> String {
            lock.lock()
            calls += 1
            let token = calls
            lock.unlock()
            return originUrl + (originUrl.contains("?") ? "&" : "?") + "token=t\(token)"
        }
    }

    @Test(.disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
    func argumentsAddedByAURLFilterDoNotSplitTheCache() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try CacheFixture(baseURL: server.baseURL)
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent { $0.addUrlFilter(TokenFilter()) }
        let request = CachedRequest(url: "/anything/filtered", arguments: ["page": 1])

        let first = try await agent.response(request)
        #expect(!first.isDataFromCache)
        #expect((first.object["args"] as? [String: Any])?["token"] as? String == "t1", "the filter ran")
        let again = try await agent.response(request)
        #expect(again.isDataFromCache)
        #expect(agent.cacheMissReason(request) == nil)
        fixture.clock.advance(by: 120)
        agent.config.isOffline = true
        #expect(try await agent.response(request).data == first.data)
        #expect(server.receivedRequests(path: "/anything/filtered").count == 1)
        await agent.waitForCacheWrites()
        #expect(fixture.entryFiles().count == 1)
    }
}
