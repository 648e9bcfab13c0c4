import Errand
import ErrandTestServer
import Foundation
import Testing

/// Offline fallback, stale-while-revalidate and cache-then-network.
@Suite("Response cache: policies")
struct CachePolicyTests {
    @Test func offlineFallbackServesTheExpiredEntryWhenTheServerIsGone() async throws {
        let server = try TestServer()
        let fixture = try CacheFixture(baseURL: server.baseURL)
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let request = CachedRequest(cacheTimeInSeconds: 60, cachePolicy: .offlineFallback)
        let original = try await agent.response(request)
        fixture.clock.advance(by: 3600)
        server.stop()

        let task = await agent.finishedTask(request)
        #expect(task.error == nil)
        #expect(task.isDataFromCache)
        #expect(task.response?.isStale == true)
        #expect(task.responseData == original.data)
        #expect(agent.cacheMissReason(request) == .expired, "the entry is kept")

        // Without the policy the same failure is reported.
        let standard = await agent.finishedTask(CachedRequest(cacheTimeInSeconds: 60))
        guard case .transport = standard.error else {
            Issue.record("expected a transport error, got \(String(describing: standard.error))")
            return
        }
    }

    @Test func offlineFallbackDoesNotHideAServerError() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let request = CachedRequest(url: "/status/503", cachePolicy: .offlineFallback)
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: request)
        let task = await withCheckedContinuation { continuation in
            agent.startWithoutCache(
                request, success: { continuation.resume(returning: $0) },
                failure: { continuation.resume(returning: $0) })
        }
        #expect(task.error == .statusCode(503))
        #expect(!task.isDataFromCache)
    }

    @Test func offlineFallbackNeverServesAnotherAccountsEntry() async throws {
        let server = try TestServer()
        let fixture = try CacheFixture(baseURL: server.baseURL)
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        _ = try await agent.response(CachedRequest(cacheSensitiveData: "ann", cachePolicy: .offlineFallback))
        server.stop()
        let task = await agent.finishedTask(CachedRequest(cacheSensitiveData: "bob", cachePolicy: .offlineFallback))
        #expect(task.error?.isTransport == true)
    }

    @Test func staleWhileRevalidateServesAtOnceAndRefreshesOnce() async throws {
        let transport = ManualTransport()
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent(transport: transport)
        let refreshed = Callback()
        let request = CachedRequest(
            cachePolicy: .staleWhileRevalidate,
            requestAccessories: [
                StopObserver { task in if !task.isDataFromCache { refreshed.record(task, succeeded: task.error == nil) }
                }
            ])
        try await agent.saveCache(Response(statusCode: 200, data: Data(#"{"v":1}"#.utf8)), for: request)
        fixture.clock.advance(by: 120)

        for _ in 0..<3 {
            let stale = try await agent.response(request)
            #expect(stale.isDataFromCache)
            #expect(stale.isStale)
            #expect(stale.data == Data(#"{"v":1}"#.utf8))
        }
        #expect(transport.sent.count == 1, "one refresh at a time")

        transport.sent[0].respond(body: #"{"v":2}"#)
        #expect(await refreshed.outcome().succeeded)
        let fresh = try await agent.response(request)
        #expect(fresh.isDataFromCache)
        #expect(!fresh.isStale)
        #expect(fresh.data == Data(#"{"v":2}"#.utf8))
        #expect(transport.sent.count == 1)
    }

    @Test func cacheThenNetworkCallsBackCachedThenFresh() async throws {
        let transport = ManualTransport()
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        // A concurrent callback queue: order must come from Errand, not from the queue.
        let agent = fixture.makeAgent(transport: transport) {
            $0.callbackQueue = DispatchQueue(label: "errand.cache-tests.concurrent", attributes: .concurrent)
        }
        let request = CachedRequest()
        try await agent.saveCache(Response(statusCode: 200, data: Data(#"{"v":1}"#.utf8)), for: request)
        fixture.clock.advance(by: 120)  // expired entries are shown too, marked stale

        let log = EventLog()
        let done = Callback()
        let task = agent.startCacheThenNetwork(
            request,
            success: { task in
                if task.isDataFromCache {
                    // The network answers while the cached callback is still running. The
                    // cached callback can run before the fresh request reaches the transport.
                    guard let sent = transport.waitForSent(count: 1) else {
                        Issue.record("the fresh request was never sent")
                        return done.record(task, succeeded: false)
                    }
                    sent[0].respond(body: #"{"v":2}"#)
                    Thread.sleep(forTimeInterval: 0.05)
                    log.append("cached stale=\(task.response?.isStale ?? false) \(task.responseString ?? "")")
                } else {
                    log.append("fresh \(task.responseString ?? "")")
                    done.record(task, succeeded: true)
                }
            },
            failure: { done.record($0, succeeded: false) })
        #expect(await done.outcome().succeeded)
        #expect(log.events == [#"cached stale=true {"v":1}"#, #"fresh {"v":2}"#])
        #expect(!task.isDataFromCache)
        #expect(try agent.loadCache(request).data == Data(#"{"v":2}"#.utf8))
    }

    @Test func cacheThenNetworkWithoutAnEntryCallsBackOnce() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        var responses: [Response] = []
        for try await response in agent.cacheThenNetwork(CachedRequest()) {
            responses.append(response)
        }
        #expect(responses.map(\.isDataFromCache) == [false])
        responses = []
        for try await response in agent.cacheThenNetwork(CachedRequest()) {
            responses.append(response)
        }
        #expect(responses.map(\.isDataFromCache) == [true, false])
        #expect(responses[0].data == responses[1].data)
    }

    @Test func cacheThenNetworkThrowsAfterTheCachedResponseWhenOffline() async throws {
        let server = try TestServer()
        let fixture = try CacheFixture(baseURL: server.baseURL)
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        _ = try await agent.response(CachedRequest())
        server.stop()
        var responses: [Response] = []
        do {
            for try await response in agent.cacheThenNetwork(CachedRequest()) {
                responses.append(response)
            }
            Issue.record("expected the network failure")
        } catch let error as ErrandError {
            #expect(error.isTransport)
        }
        #expect(responses.map(\.isDataFromCache) == [true])
    }
}

extension ErrandError {
    var isTransport: Bool {
        if case .transport = self { return true }
        return false
    }
}
