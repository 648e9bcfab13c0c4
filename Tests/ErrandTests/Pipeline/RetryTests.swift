import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

struct FlakyApi: BaseRequest {
    var url: String
    var method: HTTPMethod = .get
}

@Suite("Retries")
struct RetryTests {
    let fixture: PipelineFixture
    let agent: NetworkAgent

    init() throws {
        fixture = try PipelineFixture()
        fixture.config.addInterceptor(RetryPolicy())
        agent = fixture.makeAgent()
    }

    @Test func retryAfterSetsTheWaitAndThreeAttemptsEndInTheLastFailure() async throws {
        defer { fixture.server.stop() }
        async let finished = agent.finishedTask(FlakyApi(url: "/flaky/three?failures=5&retry_after=1"))
        await fixture.timer.waitForRequests(1)
        #expect(fixture.server.flakyCallCount(key: "three") == 1)
        fixture.timer.fireAll()
        await fixture.timer.waitForRequests(2)
        fixture.timer.fireAll()
        let task = await finished
        #expect(task.error == .statusCode(503))
        #expect(task.attemptCount == 3)
        #expect(task.response?.value(forHeader: "Retry-After") == "1")
        #expect(fixture.timer.requestedDelays == [1, 1])
        #expect(fixture.server.flakyCallCount(key: "three") == 3)
    }

    @Test func aFlakyEndpointSucceedsWithinOneTaskAndOneCallback() async throws {
        defer { fixture.server.stop() }
        let callbacks = Locked(0)
        let finished: RequestTask = await withCheckedContinuation { continuation in
            agent.start(
                FlakyApi(url: "/flaky/two?failures=2"),
                success: {
                    callbacks.withLock { $0 += 1 }
                    continuation.resume(returning: $0)
                },
                failure: {
                    callbacks.withLock { $0 += 1 }
                    continuation.resume(returning: $0)
                })
            Task {
                for count in 1...2 {
                    await fixture.timer.waitForRequests(count)
                    fixture.timer.fireAll()
                }
            }
        }
        #expect(finished.error == nil)
        #expect(finished.attemptCount == 3)
        #expect(callbacks[\.self] == 1)
        // Exponential backoff from 0.5 s, with jitter between half and all of it.
        let delays = fixture.timer.requestedDelays
        #expect(delays.count == 2)
        #expect((0.25...0.5).contains(delays[0]) && (0.5...1.0).contains(delays[1]))
    }

    @Test func postIsNotRetriedByDefault() async throws {
        defer { fixture.server.stop() }
        let task = await agent.finishedTask(FlakyApi(url: "/flaky/post?failures=1", method: .post))
        #expect(task.error == .statusCode(503))
        #expect(task.attemptCount == 1)
        #expect(fixture.server.flakyCallCount(key: "post") == 1)
        #expect(fixture.timer.requestedDelays.isEmpty)
    }

    @Test func cancelDuringABackoffEndsTheTaskAtOnce() async throws {
        defer { fixture.server.stop() }
        let task = agent.start(FlakyApi(url: "/flaky/wait?failures=5&retry_after=30"))
        await fixture.timer.waitForRequests(1)
        #expect(task.isExecuting)
        task.cancel()
        await #expect(throws: ErrandError.cancelled) { try await task.value }
        #expect(task.attemptCount == 1)
        fixture.timer.fireAll()  // A wait that fires anyway must not send again.
        #expect(fixture.server.flakyCallCount(key: "wait") == 1)
    }

    @Test func adaptRunsBeforeEveryAttempt() async throws {
        defer { fixture.server.stop() }
        struct AttemptHeader: RequestInterceptor {
            func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError)
                -> TransportRequest
            {
                var request = request
                request.headers["X-Attempt"] = String(task.attemptCount + 1)
                return request
            }
        }
        fixture.config.addInterceptor(AttemptHeader())
        async let finished = agent.finishedTask(FlakyApi(url: "/flaky/adapt?failures=1"))
        await fixture.timer.waitForRequests(1)
        fixture.timer.fireAll()
        #expect(await finished.error == nil)
        let sent = fixture.server.receivedRequests(path: "/flaky/adapt").map { $0.header("X-Attempt") }
        #expect(sent == ["1", "2"])
    }

    @Test func aCaptchaInA200BodyIsAnsweredAndTheResendCarriesTheAnswer() async throws {
        defer { fixture.server.stop() }
        /// The app's captcha screen: asked once per captcha, answers asynchronously.
        let asked = Locked([String]())
        let solver = CaptchaSolver { sid in
            asked.withLock { $0.append(sid) }
            await Task.yield()
            return TestServer.captchaAnswer(sid: sid)
        }
        struct CaptchaApi: BaseRequest {
            let solver: CaptchaSolver
            var url: String { "/captcha/protected" }
            var interceptors: [any RequestInterceptor] { [VKErrorValidator(), solver] }
        }
        let task = await agent.finishedTask(CaptchaApi(solver: solver))
        #expect(task.error == nil)
        #expect(task.response?.object["response"] != nil)
        #expect(asked[\.self].count == 1)
        let query = task.sentRequest?.url.query ?? ""
        #expect(query.contains("captcha_sid=") && query.contains("captcha_key="))
    }
}

/// Answers VK's captcha error (code 14) by asking the app, then re-sends with the answer.
struct CaptchaSolver: RequestInterceptor {
    let answer: @Sendable (_ sid: String) async -> String

    func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision {
        guard case .api(let apiError) = error, apiError.code == "14",
            let body = try? JSONSerialization.jsonObject(with: apiError.data) as? [String: Any],
            let sid = (body["error"] as? [String: Any])?["captcha_sid"] as? String
        else { return .doNotRetry }
        task.userInfo["captcha"] = [sid, await answer(sid)]
        return .retry
    }

    func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest {
        guard let captcha = task.userInfo["captcha"] as? [String], captcha.count == 2,
            var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        else { return request }
        components.queryItems =
            (components.queryItems ?? []) + [
                URLQueryItem(name: "captcha_sid", value: captcha[0]),
                URLQueryItem(name: "captcha_key", value: captcha[1]),
            ]
        var adapted = request
        adapted.url = components.url ?? request.url
        return adapted
    }
}

@Suite("RetryPolicy")
struct RetryPolicyTests {
    @Test func retryAfterIsReadAsSecondsOrAnHTTPDate() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryPolicy.seconds(inRetryAfter: "7", now: now) == 7)
        #expect(RetryPolicy.seconds(inRetryAfter: " 0 ", now: now) == 0)
        #expect(RetryPolicy.seconds(inRetryAfter: "-3", now: now) == nil)
        // 1_700_000_000 is Tue, 14 Nov 2023 22:13:20 GMT.
        #expect(RetryPolicy.seconds(inRetryAfter: "Tue, 14 Nov 2023 22:13:50 GMT", now: now) == 30)
        #expect(RetryPolicy.seconds(inRetryAfter: "Tue, 14 Nov 2023 22:00:00 GMT", now: now) == 0)
        #expect(RetryPolicy.seconds(inRetryAfter: "soon", now: now) == nil)
    }

    @Test func connectionFailuresTimeoutsAndTryLaterStatusesAreRetryable() {
        let policy = RetryPolicy()
        #expect(policy.isRetryable(.timedOut))
        #expect(policy.isRetryable(.statusCode(503)))
        #expect(policy.isRetryable(.transport(URLError(.cannotConnectToHost))))
        #expect(policy.isRetryable(.transport(URLError(.networkConnectionLost))))
        #expect(!policy.isRetryable(.statusCode(404)))
        #expect(!policy.isRetryable(.transport(URLError(.secureConnectionFailed))))
        #expect(!policy.isRetryable(.cancelled))
        #expect(!policy.isRetryable(.serialization("x")))
    }

    @Test func backoffDoublesAndIsCapped() {
        let policy = RetryPolicy(baseDelay: 1, maxDelay: 5)
        for _ in 0..<50 {
            #expect((0.5...1).contains(policy.backoff(afterAttempt: 1)))
            #expect((2...4).contains(policy.backoff(afterAttempt: 3)))
            #expect((2.5...5).contains(policy.backoff(afterAttempt: 10)))
        }
    }
}
