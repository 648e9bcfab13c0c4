import ErrandScenarios
import Foundation
import Testing

@testable import Errand

/// Work a task waits for between attempts, and the slots attempts hold, under load: many tasks
/// whose stages run at once on threads of the pool and of the transport.
@Suite("Pipeline races")
struct PipelineRaceTests {
    /// Refuses every attempt and asks for a retry an hour later: the wait is the work to stop.
    struct RetryMuchLater: RequestInterceptor {
        func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision { .retryAfter(3600) }
    }

    struct Refused: BaseRequest {
        var url: String
        var interceptors: [any RequestInterceptor] { [RetryMuchLater()] }
    }

    /// The adapt, the retry decision and the back-off are each registered to be stopped by
    /// `cancel()`; one registered later must never be replaced by one registered earlier.
    @Test func cancellingStopsEveryBackoffItsTasksWaitFor() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.server.stop() }
        let transport = StubTransport { _ in Response(statusCode: 503) }
        let agent = fixture.makeAgent(transport: transport)
        let count = 3_000
        agent.maxConcurrentRequests = count
        let tasks = try await onOwnThread {
            (0..<count).map { agent.start(Refused(url: "/refused/\($0)")) }
        }
        await fixture.timer.waitForRequests(count)
        tasks.forEach { $0.cancel() }
        #expect(fixture.timer.pendingCount == 0, "cancelled tasks left back-offs waiting")
    }
}
