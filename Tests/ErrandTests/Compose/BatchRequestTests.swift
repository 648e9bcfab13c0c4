import ErrandScenarios
import Foundation
import Testing

@testable import Errand

@Suite("Batch requests")
struct BatchRequestTests {
    let fixture: PipelineFixture
    let agent: NetworkAgent

    init() throws {
        fixture = try PipelineFixture()
        agent = fixture.makeAgent()
    }

    @Test func responsesComeInRequestOrder() async throws {
        defer { fixture.server.stop() }
        let requests = (0..<5).map { PathApi("/anything", arguments: ["n": "\($0)"]) }
        let responses = try await BatchRequest(requests: requests, agent: agent).responses()
        #expect(responses.map { $0.echoedArgs["n"] } == ["0", "1", "2", "3", "4"])
    }

    @Test func aFailureCancelsTheSiblingsAndCallsBackOnce() async throws {
        defer { fixture.server.stop() }
        let batch = BatchRequest(
            requests: [PathApi("/delay/3"), PathApi("/status/500"), PathApi("/delay/3")], agent: agent)
        let callbacks = GroupCallbacks<BatchTask>()
        let task = batch.start(success: callbacks.success, failure: callbacks.failure)
        #expect(await callbacks.calls() == ["failure"])
        #expect(task.failedTask === task.tasks[1])
        #expect(task.error == .statusCode(500))
        #expect(task.tasks[0].error == .cancelled && task.tasks[2].error == .cancelled)
        #expect(task.tasks.allSatisfy { !$0.isExecuting })
        // Let a late duplicate callback show itself before counting.
        await withCheckedContinuation { done in fixture.config.callbackQueue.async { done.resume() } }
        #expect(await callbacks.calls() == ["failure"])
    }

    @Test func runsToEndReportsEveryResult() async throws {
        defer { fixture.server.stop() }
        let batch = BatchRequest(
            requests: [PathApi("/status/500"), PathApi("/anything", arguments: ["n": "1"])], runsToEnd: true,
            agent: agent)
        let results = await batch.results()
        #expect(results.count == 2)
        #expect(throws: ErrandError.statusCode(500)) { try results[0].get() }
        #expect(try results[1].get().echoedArgs["n"] == "1")

        let callbacks = GroupCallbacks<BatchTask>()
        let task = batch.start(success: callbacks.success, failure: callbacks.failure)
        #expect(await callbacks.calls() == ["failure"])
        #expect(task.failedTask === task.tasks[0])
        #expect(task.tasks[1].responseStatusCode == 200)
    }

    @Test func progressCountsFinishedMembersByClosureAndStream() async throws {
        defer { fixture.server.stop() }
        let seen = Locked<[BatchProgress]>([])
        let callbacks = GroupCallbacks<BatchTask>()
        let task = BatchRequest(requests: (0..<4).map { PathApi("/anything/\($0)") }, agent: agent)
            .start(progress: { progress in seen.withLock { $0.append(progress) } }, success: callbacks.success)
        var streamed: [BatchProgress] = []
        for await progress in task.progressUpdates { streamed.append(progress) }
        #expect(streamed.last == BatchProgress(finished: 4, total: 4))
        #expect(streamed.map(\.finished) == streamed.map(\.finished).sorted())
        #expect(await callbacks.calls() == ["success"])
        #expect(seen.withLock { $0 }.map(\.finished) == [1, 2, 3, 4])
        #expect(task.progress.fractionCompleted == 1)
    }

    @Test func isDataFromCacheOnlyWhenEveryMemberCameFromTheCache() async throws {
        defer { fixture.server.stop() }
        fixture.config.cacheDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-batch-\(UUID().uuidString)")
        let first = ["/anything/a", "/anything/b"].map {
            CachedRequest(url: $0, cacheTimeInSeconds: CacheLifetime.hour)
        }
        let warm = BatchRequest(requests: first, agent: agent)
        let callbacks = GroupCallbacks<BatchTask>()
        let cold = warm.start(success: callbacks.success, failure: callbacks.failure)
        #expect(await callbacks.calls() == ["success"])
        #expect(!cold.isDataFromCache)

        let again = GroupCallbacks<BatchTask>()
        let cached = warm.start(success: again.success)
        #expect(await again.calls() == ["success"])
        #expect(cached.isDataFromCache)

        let mixed = GroupCallbacks<BatchTask>()
        let partly = BatchRequest(
            requests: first + [CachedRequest(url: "/anything/c", cacheTimeInSeconds: CacheLifetime.hour)], agent: agent
        )
        .start(success: mixed.success)
        #expect(await mixed.calls() == ["success"])
        #expect(!partly.isDataFromCache)
    }

    @Test func cancellingTheSwiftTaskCancelsTheBatch() async throws {
        defer { fixture.server.stop() }
        let batch = BatchRequest(requests: [PathApi("/delay/3"), PathApi("/delay/3")], agent: agent)
        let waiting = Task { try await batch.responses() }
        waiting.cancel()
        await #expect(throws: ErrandError.cancelled) { try await waiting.value }
    }

    @Test func cancelAllRequestsEndsABatch() async throws {
        defer { fixture.server.stop() }
        let callbacks = GroupCallbacks<BatchTask>()
        let task = BatchRequest(requests: [PathApi("/delay/3"), PathApi("/delay/3")], agent: agent)
            .start(success: callbacks.success, failure: callbacks.failure)
        agent.cancelAllRequests()
        #expect(await callbacks.calls() == ["failure"])
        #expect(task.error == .cancelled)
        #expect(task.tasks.allSatisfy { $0.error == .cancelled })
    }

    @Test func aTokenExpiryDuringABatchOfTwentyCausesOneRefresh() async throws {
        defer { fixture.server.stop() }
        let token = try Token(try await agent.response(LoginApi()))
        let interceptor = AuthenticationInterceptor(
            authenticator: TokenAuthenticator(agent: agent), credential: token)
        fixture.config.addInterceptor(interceptor)
        fixture.server.expireAccessTokens()
        let requests = (0..<20).map { ProtectedApi(url: "/auth/protected/\($0)") }
        let responses = try await BatchRequest(requests: requests, agent: agent).responses()
        #expect(responses.count == 20 && responses.allSatisfy { $0.statusCode == 200 })
        #expect(fixture.server.refreshCount == 1)
    }

    @Test func accessoriesAreToldAroundTheOneCallback() async throws {
        defer { fixture.server.stop() }
        let events = Locked<[String]>([])
        struct Recorder: RequestGroupAccessory {
            let events: Locked<[String]>
            func requestGroupWillStart(_ task: any RequestGroupTask) { events.withLock { $0.append("willStart") } }
            func requestGroupWillStop(_ task: any RequestGroupTask) { events.withLock { $0.append("willStop") } }
            func requestGroupDidStop(_ task: any RequestGroupTask) { events.withLock { $0.append("didStop") } }
        }
        var batch = BatchRequest(requests: [PathApi("/anything")], agent: agent)
        batch.accessories = [Recorder(events: events)]
        let callbacks = GroupCallbacks<BatchTask>()
        batch.start(success: { task in
            events.withLock { $0.append("success") }
            callbacks.success(task)
        })
        #expect(await callbacks.calls() == ["success"])
        await withCheckedContinuation { done in fixture.config.callbackQueue.async { done.resume() } }
        #expect(events.withLock { $0 } == ["willStart", "willStop", "success", "didStop"])
    }
}
