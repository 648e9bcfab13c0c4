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

/// A transport that answers after `latency`, refusing each URL's first call, and records the
/// most calls it ever had in flight at once.
final class ConcurrencyRecordingTransport: Transport {
    private struct State {
        var inFlight = 0
        var peak = 0
        var calledURLs: Set<URL> = []
    }

    private let state = Locked(State())
    private let latency: TimeInterval

    init(latency: TimeInterval) {
        self.latency = latency
    }

    var peak: Int { state[\.peak] }

    func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> any TransportTask {
        let status = state.withLock { state in
            state.inFlight += 1
            state.peak = max(state.peak, state.inFlight)
            return state.calledURLs.insert(request.url).inserted ? 503 : 200
        }
        let stub = StubTransport(latency: latency) { _ in Response(statusCode: status, data: Data("{}".utf8)) }
        return stub.send(request) { [state] event in
            if case .completed = event { state.withLock { $0.inFlight -= 1 } }
            events(event)
        }
    }
}

extension PipelineRaceTests {
    /// Retries a refused attempt at once.
    struct RetryAtOnce: RequestInterceptor {
        func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision {
            task.attemptCount < 3 ? .retry : .doNotRetry
        }
    }

    struct Shared: BaseRequest {
        var url: String
        var interceptors: [any RequestInterceptor] { [RetryAtOnce()] }
    }

    /// A caller that joins another's call gives its slot up; it must give up that slot, not the
    /// one its retry took after the shared call ended with an answer to retry.
    @Test func sharedCallsAndTheirRetriesStayWithinMaxConcurrentRequests() async throws {
        let transport = ConcurrencyRecordingTransport(latency: 0.000_5)
        let agent = NetworkAgent.testing(transport)
        agent.maxConcurrentRequests = 2
        let requests = (0..<400).map { Shared(url: "/shared/\($0 % 40)") }
        await withTaskGroup(of: Void.self) { group in
            for request in requests {
                group.addTask { _ = try? await agent.response(request) }
            }
        }
        #expect(transport.peak <= 2, "\(transport.peak) calls were in flight at once")
    }
}
