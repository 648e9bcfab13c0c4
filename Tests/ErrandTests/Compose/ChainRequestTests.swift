import ErrandScenarios
import Foundation
import Testing

@testable import Errand

@Suite("Chain requests and nesting")
struct ChainRequestTests {
    let fixture: PipelineFixture
    let agent: NetworkAgent

    init() throws {
        fixture = try PipelineFixture()
        agent = fixture.makeAgent()
    }

    @Test func threeDependentStepsPassDataAlong() async throws {
        defer { fixture.server.stop() }
        var chain = ChainRequest(agent: agent)
        chain.add(PathApi("/anything", arguments: ["user": "ann"])) { chain, first in
            let user = first.response?.echoedArgs["user"] ?? "?"
            chain.add(PathApi("/anything/profile/\(user)", arguments: ["from": user])) { chain, second in
                let path = second.response?.object["url"] as? String ?? "?"
                chain.add(PathApi("/anything", arguments: ["previous": URL(string: path)?.path ?? "?"]))
            }
        }
        let responses = try await chain.responses()
        #expect(responses.count == 3)
        #expect(responses[1].echoedArgs["from"] == "ann")
        #expect(responses[2].echoedArgs["previous"] == "/anything/profile/ann")
    }

    @Test func aFailingStepEndsTheChainOnce() async throws {
        defer { fixture.server.stop() }
        var chain = ChainRequest(agent: agent)
        chain.add(PathApi("/status/404"))
        chain.add(PathApi("/anything"))
        let callbacks = GroupCallbacks<ChainTask>()
        let task = chain.start(success: callbacks.success, failure: callbacks.failure)
        #expect(await callbacks.calls() == ["failure"])
        #expect(task.tasks.count == 1)
        #expect(task.failedTask === task.tasks[0])
        #expect(task.error == .statusCode(404))
    }

    @Test func aBatchIsAStepOfAChainAndAChainAMemberOfABatch() async throws {
        defer { fixture.server.stop() }
        var inner = ChainRequest(agent: agent)
        inner.add(PathApi("/anything", arguments: ["n": "c1"])) { chain, _ in
            chain.add(PathApi("/anything", arguments: ["n": "c2"]))
        }
        var outer = ChainRequest(agent: agent)
        outer.add(PathApi("/anything", arguments: ["n": "s1"]))
        outer.add(
            BatchRequest(
                groups: [inner, BatchRequest(requests: [PathApi("/anything", arguments: ["n": "b1"])], agent: agent)],
                agent: agent)
        ) { chain, batch in
            chain.add(PathApi("/anything", arguments: ["n": "after \(batch.tasks.count)"]))
        }
        let responses = try await outer.responses()
        #expect(responses.map { $0.echoedArgs["n"] } == ["s1", "c1", "c2", "b1", "after 3"])
    }

    @Test func cancellingTheOutermostCancelsEveryInnerTask() async throws {
        defer { fixture.server.stop() }
        var inner = ChainRequest(agent: agent)
        inner.add(PathApi("/delay/3"))
        inner.add(PathApi("/anything/never"))
        let batch = BatchRequest(
            groups: [inner, BatchRequest(requests: [PathApi("/delay/3"), PathApi("/delay/3")], agent: agent)],
            agent: agent)
        var outer = ChainRequest(agent: agent)
        outer.add(batch)
        outer.add(PathApi("/anything/never-either"))
        let callbacks = GroupCallbacks<ChainTask>()
        let task = outer.start(success: callbacks.success, failure: callbacks.failure)
        task.cancel()
        #expect(await callbacks.calls() == ["failure"])
        #expect(task.error == .cancelled)
        #expect(task.tasks.count == 3)
        #expect(task.tasks.allSatisfy { $0.error == .cancelled && !$0.isExecuting })
    }

    @Test func cancellingTheSwiftTaskCancelsTheChain() async throws {
        defer { fixture.server.stop() }
        var chain = ChainRequest(agent: agent)
        chain.add(PathApi("/delay/3"))
        let waiting = Task { try await chain.responses() }
        waiting.cancel()
        await #expect(throws: ErrandError.cancelled) { try await waiting.value }
    }
}

/// A batch and chain delegate that records which method each group called.
@MainActor
final class RecordingGroupDelegate: BatchRequestDelegate, ChainRequestDelegate {
    private var waiter: CheckedContinuation<Void, Never>?
    var calls: [String] = []

    func batchRequestFinished(_ task: BatchTask) { done("batchRequestFinished") }
    func batchRequestFailed(_ task: BatchTask) { done("batchRequestFailed") }
    func chainRequestFinished(_ task: ChainTask) { done("chainRequestFinished") }
    func chainRequestFailed(_ task: ChainTask) { done("chainRequestFailed") }

    private func done(_ call: String) {
        calls.append(call)
        waiter?.resume()
        waiter = nil
    }

    func waitForCallback() async { await withCheckedContinuation { waiter = $0 } }
}

@Suite("Batch and chain delegates")
@MainActor
struct GroupDelegateTests {
    @Test func delegatesAreToldOnceAndReleased() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent()
        let delegate = RecordingGroupDelegate()
        BatchRequest(requests: [PathApi("/anything")], agent: agent).start(delegate: delegate)
        await delegate.waitForCallback()
        var chain = ChainRequest(agent: agent)
        chain.add(PathApi("/status/500"))
        chain.start(delegate: delegate)
        await delegate.waitForCallback()
        #expect(delegate.calls == ["batchRequestFinished", "chainRequestFailed"])

        // The batch ends and lets its delegate go.
        weak var released: RecordingGroupDelegate?
        let task: BatchTask
        do {
            let temporary = RecordingGroupDelegate()
            released = temporary
            task = BatchRequest(requests: [PathApi("/status/500")], agent: agent).start(delegate: temporary)
        }
        for await _ in task.progressUpdates {}
        #expect(released == nil)
        #expect(task.error == .statusCode(500))
    }
}
