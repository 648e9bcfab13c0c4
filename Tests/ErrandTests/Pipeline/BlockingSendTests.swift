import Errand
import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@Suite("Blocking send")
struct BlockingSendTests {
    let server: TestServer
    let agent: NetworkAgent

    init() throws {
        server = try TestServer()
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        // The default: closures on the main queue, where the blocking call below also runs.
        config.callbackQueue = .main
        agent = NetworkAgent(config: config)
    }

    struct Get: BaseRequest {
        var url: String
        var interceptors: [any RequestInterceptor] = []
    }

    /// Runs `body` on `queue` and hands back what it returned.
    func on<T: Sendable>(_ queue: DispatchQueue, _ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in queue.async { continuation.resume(returning: body()) } }
    }

    @Test func aScriptThreadGetsTheResponseAfterRetriesByInterceptors() async {
        defer { server.stop() }
        let retry = RetryPolicy(baseDelay: 0.001)
        let outcome = await on(.global()) { [agent] in
            Result { () throws(ErrandError) in
                try agent.responseSync(Get(url: "/flaky/sync?failures=1", interceptors: [retry]))
            }
        }
        #expect((try? outcome.get())?.statusCode == 200)
        #expect(server.flakyCallCount(key: "sync") == 2)
    }

    @Test func onTheMainQueueThatIsAlsoTheCallbackQueueItDoesNotDeadlock() async {
        defer { server.stop() }
        let outcome = await on(.main) { [agent] in
            Result { () throws(ErrandError) in try agent.responseSync(Get(url: "/get?main")) }
        }
        #expect((try? outcome.get())?.statusCode == 200)
    }

    @Test func insideACallbackOnASerialCallbackQueueItDoesNotDeadlock() async {
        defer { server.stop() }
        let nested: Result<Response, ErrandError> = await withCheckedContinuation { continuation in
            agent.start(
                Get(url: "/get?outer"),
                success: { [agent] _ in
                    continuation.resume(
                        returning: Result { () throws(ErrandError) in try agent.responseSync(Get(url: "/get?inner")) })
                }, failure: { continuation.resume(returning: .failure($0.error ?? .cancelled)) })
        }
        #expect((try? nested.get())?.statusCode == 200)
    }

    @Test func aFailureIsThrown() async {
        defer { server.stop() }
        let outcome = await on(.global()) { [agent] in
            Result { () throws(ErrandError) in try agent.responseSync(Get(url: "/status/418")) }
        }
        #expect(throws: ErrandError.statusCode(418)) { try outcome.get() }
    }
}
