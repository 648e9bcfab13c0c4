import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A misbehaving server on loopback (`/fault/{kind}`): every fault ends in exactly one callback,
/// within the request's timeout, with an error a caller can act on. Agents use the default
/// transport, so `swift test` checks CurlTransport and `ERRAND_TRANSPORT=urlsession swift test`
/// URLSessionTransport; where the two reach the same error by different paths, the test says so.
/// One fault at a time: an endless body or 10,000 headers keep a core busy, and would slow the others.
@Suite("Server faults and bad input", .serialized)
struct FaultTests {
    struct FaultRequest: BaseRequest {
        var url: String
        var responseSerializerType: ResponseSerializerType = .json
        /// The bound on "promptly": a transport that hung would fail the test with `.timedOut`
        /// rather than stall it. Generous, as the suite runs in parallel with the soak, which can
        /// keep every core busy for seconds.
        var timeoutInterval: TimeInterval = 30
        var timeoutIntervalForResource: TimeInterval?
        var maximumResponseSize: Int?
        var interceptors: [any RequestInterceptor] = []
    }

    let server: TestServer
    let agent: NetworkAgent
    let callbackQueue = DispatchQueue(label: "errand.tests.faults")

    init() throws {
        server = try TestServer()
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = callbackQueue
        agent = NetworkAgent(config: config)
    }

    /// Runs `request` to its callback, then checks that no second callback came: another request
    /// on the same agent, and the callback queue after it, finish first. A healthy answer to that
    /// one also shows the fault left the agent working.
    func finish(_ request: FaultRequest) async -> RequestTask {
        defer { server.stop() }
        let callbacks = Locked(0)
        let task = await withCheckedContinuation { (continuation: CheckedContinuation<RequestTask, Never>) in
            let done: @Sendable (RequestTask) -> Void = { task in
                if callbacks.withLock({ count in
                    count += 1
                    return count
                }) == 1 {
                    continuation.resume(returning: task)
                }
            }
            agent.start(request, success: done, failure: done)
        }
        let after = await agent.finishedTask(FaultRequest(url: "/get"))
        #expect(
            after.error == nil, "the agent failed a healthy request after the fault: \(String(describing: after.error))"
        )
        await withCheckedContinuation { done in callbackQueue.async { done.resume() } }
        #expect(callbacks[\.self] == 1, "\(request.url) called back \(callbacks[\.self]) times")
        return task
    }

    /// The `URLError` code of a transport failure, or `nil` for any other outcome.
    static func urlErrorCode(_ task: RequestTask) -> URLError.Code? {
        if case .transport(let error) = task.error { return error.code }
        return nil
    }

    static func isSerializationError(_ task: RequestTask) -> Bool {
        if case .serialization = task.error { return true }
        return false
    }

    @Test func aResetBeforeAnyByteIsALostConnection() async {
        let task = await finish(FaultRequest(url: "/fault/reset"))
        #expect(Self.urlErrorCode(task) == .networkConnectionLost, "\(String(describing: task.error))")
        #expect(task.response == nil)
    }

    @Test func aResetRetriedByARetryPolicyStillCallsBackOnce() async {
        let retry = RetryPolicy(maxAttempts: 3, baseDelay: 0.001, maxDelay: 0.01)
        let task = await finish(FaultRequest(url: "/fault/reset", interceptors: [retry]))
        #expect(Self.urlErrorCode(task) == .networkConnectionLost, "\(String(describing: task.error))")
        #expect(task.attemptCount == 3)
    }

    @Test func aResetMidBodyIsALostConnectionNotAShortSuccess() async {
        let task = await finish(FaultRequest(url: "/fault/reset-mid-body", responseSerializerType: .data))
        #expect(Self.urlErrorCode(task) == .networkConnectionLost, "\(String(describing: task.error))")
    }

    @Test func aBodyShorterThanItsContentLengthIsALostConnection() async {
        let task = await finish(FaultRequest(url: "/fault/truncated", responseSerializerType: .data))
        #expect(Self.urlErrorCode(task) == .networkConnectionLost, "\(String(describing: task.error))")
    }

    @Test func aChunkedBodyClosedBeforeItsLastChunkIsALostConnection() async {
        let task = await finish(FaultRequest(url: "/fault/chunked-cut"))
        #expect(Self.urlErrorCode(task) == .networkConnectionLost, "\(String(describing: task.error))")
    }

    @Test func headersThatStopComingTimeOut() async {
        let task = await finish(FaultRequest(url: "/fault/endless-headers", timeoutInterval: 1))
        #expect(task.error == .timedOut)
    }

    /// Header lines trickled forever never make a head: neither transport counts them as activity,
    /// so the idle timeout ends the request long before the resource deadline, the safety net here.
    @Test func headersTrickledForeverEndAtTheIdleTimeout() async {
        let started = ContinuousClock.now
        let task = await finish(
            FaultRequest(
                url: "/fault/endless-headers?trickle_ms=100", timeoutInterval: 1, timeoutIntervalForResource: 30))
        #expect(task.error == .timedOut)
        #expect(task.response == nil)
        #expect(ContinuousClock.now - started < .seconds(15), "ended by the idle timeout, not the deadline")
    }

    @Test func garbageInsteadOfHTTPIsABadServerResponse() async {
        let task = await finish(FaultRequest(url: "/fault/garbage"))
        #expect(Self.urlErrorCode(task) == .badServerResponse, "\(String(describing: task.error))")
    }

    @Test func aGzipBodyThatIsNotGzipCannotBeDecoded() async {
        let task = await finish(FaultRequest(url: "/fault/bad-gzip"))
        #expect(Self.urlErrorCode(task) == .cannotDecodeContentData, "\(String(describing: task.error))")
    }

    @Test func tenThousandHeaderFieldsAreAllDelivered() async {
        let task = await finish(FaultRequest(url: "/fault/many-headers"))
        #expect(task.error == nil)
        #expect(task.responseHeaders.keys.filter { $0.hasPrefix("X-Fault-") }.count == 10_000)
        #expect(task.responseHeaders["X-Fault-9999"] == "9999")
        #expect((task.responseJSONObject as? [String: Any])?["headers"] as? Int == 10_000)
    }

    @Test(arguments: [ResponseSerializerType.string, .json])
    func invalidUTF8IsASerializationError(_ serializer: ResponseSerializerType) async {
        let task = await finish(FaultRequest(url: "/fault/invalid-utf8", responseSerializerType: serializer))
        #expect(Self.isSerializationError(task), "\(String(describing: task.error))")
        #expect(task.responseStatusCode == 200)
    }

    @Test func aHundredThousandNestedArraysAreASerializationErrorNotACrash() async {
        let task = await finish(FaultRequest(url: "/fault/deep-json"))
        #expect(Self.isSerializationError(task), "\(String(describing: task.error))")
        #expect(task.responseData?.count == 200_000)
    }

    @Test func anEndlessBodyStopsAtTheRequestsMaximumSize() async {
        let task = await finish(
            FaultRequest(url: "/fault/endless-body", responseSerializerType: .data, maximumResponseSize: 1 << 20))
        #expect(task.error == .responseTooLarge(1 << 20))
    }

    @Test func aRedirectLoopIsARefusedRedirect() async {
        let task = await finish(FaultRequest(url: "/fault/redirect-loop"))
        guard case .redirectRefused(let reason) = task.error else {
            Issue.record("expected a refused redirect, got \(String(describing: task.error))")
            return
        }
        #expect(reason.contains("/fault/redirect-loop"))
    }

    /// On Linux, URLSession left to itself waits forever on a Basic challenge it has no answer for.
    @Test func aBasicAuthenticationChallengeIsA401() async {
        let task = await finish(FaultRequest(url: "/basic-auth/user/passwd"))
        #expect(task.error == .statusCode(401))
        #expect(task.responseStatusCode == 401)
        #expect(task.responseHeaders["WWW-Authenticate"]?.hasPrefix("Basic") == true)
    }
}
