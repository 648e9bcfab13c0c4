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
                return Response(statusCode: 200, headers: ["Content-Type": "application/json"], data: Data(#"{"nick":"ann"}"#.utf8))
            })
        let response = try await agent.response(Request())
        #expect(response.object["nick"] as? String == "ann")
        #expect(seen.events == ["GET http://example.invalid/user"])
    }

    @Test func stubErrorsAreTransportFailures() async {
        let agent = NetworkAgent.testing(StubTransport { _ throws(ErrandError) in throw .transport(URLError(.notConnectedToInternet)) })
        await #expect(throws: ErrandError.transport(URLError(.notConnectedToInternet))) { try await agent.response(Request()) }
    }

    @Test func cancellingDuringStubLatencyCallsBackOnce() async {
        let agent = NetworkAgent.testing(StubTransport(latency: 30) { _ in Response(statusCode: 200) })
        let callback = Callback()
        let task = agent.start(Request(), success: { callback.record($0, succeeded: true) }, failure: { callback.record($0, succeeded: false) })
        task.cancel()
        #expect(await callback.outcome().error == .cancelled)
        #expect(callback.count == 1)
    }

    @Test func startWithoutCacheCallsBack() async {
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200, data: Data(#"{"nick":"b"}"#.utf8)) })
        let callback = Callback()
        agent.startWithoutCache(Request(), success: { callback.record($0, succeeded: true) }, failure: { callback.record($0, succeeded: false) })
        #expect(await callback.outcome().succeeded)
    }

    @Test func closuresRunOnTheMainQueueByDefault() async {
        // On Linux the main queue may be drained by a worker thread, so ask the queue, not the thread.
        let key = DispatchSpecificKey<String>()
        DispatchQueue.main.setSpecific(key: key, value: "main")
        let config = NetworkConfig()
        config.baseUrl = "http://example.invalid"
        let agent = NetworkAgent(config: config, transport: StubTransport { _ in Response(statusCode: 200, data: Data(#"{"nick":"c"}"#.utf8)) })
        let onMain = await withCheckedContinuation { continuation in
            agent.start(Request(), success: { _ in continuation.resume(returning: DispatchQueue.getSpecific(key: key) == "main") })
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
