import Errand
import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@Suite("StubTransport, default callbacks, and transport failures")
struct StubAndTransportTests {
    struct Request: BaseRequest {
        var url = "/user"
        var jsonValidator: JSONValidator? { ["nick": .string] }
    }

    @Test func stubAnswersAndSeesTheBuiltRequest() async throws {
        let seen = EventLog()
        let agent = NetworkAgent.testing(
            StubTransport { request in
                seen.append("\(request.method) \(request.url.absoluteString)")
                return Response(
                    statusCode: 200, headers: ["Content-Type": "application/json"], data: Data(#"{"nick":"ann"}"#.utf8))
            })
        let response = try await agent.response(Request())
        #expect(response.object["nick"] as? String == "ann")
        #expect(seen.events == ["GET http://example.invalid/user"])
    }

    @Test func stubErrorsAreTransportFailures() async {
        let agent = NetworkAgent.testing(
            StubTransport { _ throws(ErrandError) in throw .transport(URLError(.notConnectedToInternet)) })
        await #expect(throws: ErrandError.transport(URLError(.notConnectedToInternet))) {
            try await agent.response(Request())
        }
    }

    @Test func cancellingDuringStubLatencyCallsBackOnce() async {
        let agent = NetworkAgent.testing(StubTransport(latency: 30) { _ in Response(statusCode: 200) })
        let callback = Callback()
        let task = agent.start(
            Request(), success: { callback.record($0, succeeded: true) },
            failure: { callback.record($0, succeeded: false) })
        task.cancel()
        #expect(await callback.outcome().error == .cancelled)
        #expect(callback.count == 1)
    }

    @Test func startWithoutCacheCallsBack() async {
        let agent = NetworkAgent.testing(
            StubTransport { _ in Response(statusCode: 200, data: Data(#"{"nick":"b"}"#.utf8)) })
        let callback = Callback()
        agent.startWithoutCache(
            Request(), success: { callback.record($0, succeeded: true) },
            failure: { callback.record($0, succeeded: false) })
        #expect(await callback.outcome().succeeded)
    }

    @Test func closuresRunOnTheMainQueueByDefault() async {
        // On Linux the main queue may be drained by a worker thread, so ask the queue, not the thread.
        let key = DispatchSpecificKey<String>()
        DispatchQueue.main.setSpecific(key: key, value: "main")
        let config = NetworkConfig()
        config.baseUrl = "http://example.invalid"
        let agent = NetworkAgent(
            config: config,
            transport: StubTransport { _ in Response(statusCode: 200, data: Data(#"{"nick":"c"}"#.utf8)) })
        let onMain = await withCheckedContinuation { continuation in
            agent.start(
                Request(),
                success: { _ in continuation.resume(returning: DispatchQueue.getSpecific(key: key) == "main") })
        }
        #expect(onMain)
    }

    @Test func loadCacheReportsWhyNothingIsServed() {
        struct Cached: BaseRequest { var cacheTimeInSeconds: Int { 60 } }
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200) })
        #expect(throws: ErrandError.cacheMiss(.disabled)) { try agent.loadCache(Request()) }
        #expect(throws: ErrandError.cacheMiss(.missing)) { try agent.loadCache(Cached()) }
    }

    @Test func aRefusedConnectionIsATransportError() async throws {
        let server = try TestServer()
        let baseURL = server.baseURL
        server.stop()
        let agent = NetworkAgent.testing(URLSessionTransport(), baseUrl: baseURL)
        let task = await agent.finishedTask(Request())
        guard case .transport(let error) = task.error else {
            Issue.record("expected a transport error, got \(String(describing: task.error))")
            return
        }
        #expect(error.code == .cannotConnectToHost)
        #expect(task.response == nil)
    }
}

@Suite("NetworkConfig is safe to change from any thread")
struct NetworkConfigConcurrencyTests {
    struct Filter: URLFilter {
        func filterUrl(_ originUrl: String, request: any BaseRequest) -> String { originUrl }
    }

    struct Request: BaseRequest {
        var url: String { "/item" }
        var arguments: [String: any Sendable]? { ["n": 1] }
        // Each request must reach the transport, which counts the hosts they were sent to.
        var coalescesDuplicates: Bool { false }
    }

    @Test func requestsRunWhileTheConfigChanges() async throws {
        let config = NetworkConfig()
        config.baseUrl = "http://a.example.invalid"
        config.callbackQueue = DispatchQueue(label: "config-concurrency")
        let hosts = EventLog()
        let agent = NetworkAgent(
            config: config,
            transport: StubTransport { request in
                hosts.append(request.url.host ?? "?")
                return Response(statusCode: 200, data: Data("{}".utf8))
            })
        agent.maxConcurrentRequests = 16
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    if index % 2 == 0 {
                        config.baseUrl = index % 4 == 0 ? "http://a.example.invalid" : "http://b.example.invalid"
                        config.addUrlFilter(Filter())
                        config.debugLogEnabled = false
                    }
                    _ = try await agent.response(Request())
                }
            }
            try await group.waitForAll()
        }
        #expect(hosts.events.count == 200)
        #expect(Set(hosts.events).isSubset(of: ["a.example.invalid", "b.example.invalid"]))
        #expect(config.urlFilters.count == 100)
    }
}
