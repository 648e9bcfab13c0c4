import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// A GET that the server holds until the test publishes a long-poll event: a gate, held up to ten
/// minutes, as long as the slowest sanitizer run needs.
private struct HeldRequest: BaseRequest {
    var method: HTTPMethod = .get
    var headers: [String: String] = [:]
    var coalesces: Bool?
    var url: String { "/longpoll/poll?key=key-1&ts=0&wait=600" }
    var timeoutInterval: TimeInterval { 600 }
    var responseSerializerType: ResponseSerializerType { .data }
    var coalescesDuplicates: Bool { coalesces ?? (method == .get) }
}

@Suite("Coalescing identical requests in flight")
struct CoalescingTests {
    let fixture: PipelineFixture
    let transport: CountingTransport
    let agent: NetworkAgent

    init() throws {
        fixture = try PipelineFixture()
        transport = CountingTransport()
        agent = fixture.makeAgent(transport: transport)
    }

    private var serverHits: Int { fixture.server.receivedRequests(path: "/longpoll/poll").count }

    /// Starts `requests` at once; the tasks and, once each finishes, its outcome.
    private func start(_ requests: [HeldRequest]) -> ([RequestTask], AsyncStream<RequestTask>) {
        let (finished, sink) = AsyncStream.makeStream(of: RequestTask.self)
        let tasks = requests.map { request in
            agent.start(request, success: { sink.yield($0) }, failure: { sink.yield($0) })
        }
        return (tasks, finished)
    }

    private func collect(_ count: Int, from stream: AsyncStream<RequestTask>) async -> [RequestTask] {
        var finished: [RequestTask] = []
        for await task in stream {
            finished.append(task)
            if finished.count == count { break }
        }
        return finished
    }

    @Test func fiftyIdenticalGetsCauseOneServerHitAndFiftyCallbacksWithTheBody() async throws {
        defer { fixture.server.stop() }
        let (_, finished) = start(Array(repeating: HeldRequest(), count: 50))
        try await eventually { agent.pipeline.coalescer.waitingCallers == 50 }
        #expect(agent.pipeline.coalescer.waitingCallers == 50)
        fixture.server.publishLongPollEvents(["hello"])
        let tasks = await collect(50, from: finished)
        #expect(tasks.count == 50)
        #expect(Set(tasks.map(ObjectIdentifier.init)).count == 50)
        for task in tasks {
            #expect(task.error == nil)
            #expect(task.response?.object["updates"] as? [String] == ["hello"])
        }
        #expect(serverHits == 1)
        #expect(transport.sends.withLock { $0 } == 1)
    }

    @Test func cancellingFortyNineStillDeliversTheFiftieth() async throws {
        defer { fixture.server.stop() }
        let (tasks, finished) = start(Array(repeating: HeldRequest(), count: 50))
        try await eventually { agent.pipeline.coalescer.waitingCallers == 50 }
        tasks.dropLast().forEach { $0.cancel() }
        let cancelled = await collect(49, from: finished)
        #expect(cancelled.allSatisfy { $0.error == .cancelled })
        #expect(transport.cancels.withLock { $0 } == 0)
        fixture.server.publishLongPollEvents(["still here"])
        let last = await collect(1, from: finished)
        #expect(last.first === tasks.last)
        #expect(last.first?.error == nil)
        #expect(last.first?.response?.object["updates"] as? [String] == ["still here"])
        #expect(serverHits == 1)
    }

    @Test func cancellingEveryCallerCancelsTheNetworkCall() async throws {
        defer { fixture.server.stop() }
        let (tasks, finished) = start(Array(repeating: HeldRequest(), count: 50))
        try await eventually { agent.pipeline.coalescer.waitingCallers == 50 }
        tasks.dropLast().forEach { $0.cancel() }
        #expect(transport.cancels.withLock { $0 } == 0)
        tasks.last?.cancel()
        try await eventually { transport.cancels.withLock { $0 } == 1 }
        #expect(transport.cancels.withLock { $0 } == 1)
        let all = await collect(50, from: finished)
        #expect(all.allSatisfy { $0.error == .cancelled })
        #expect(transport.sends.withLock { $0 } == 1)
    }

    @Test func aRequestAfterTheAnswerBeganMakesItsOwnCallAndGetsTheWholeBody() async throws {
        defer { fixture.server.stop() }
        let manual = ManualTransport()
        let agent = NetworkAgent.testing(manual)
        async let first = agent.finishedTask(HeldRequest())
        try await eventually { manual.sent.count == 1 }
        let call = try #require(manual.sent.first)
        call.events(.responseHead(statusCode: 200, headers: [:]))
        call.events(.body(Data("{\"first\": ".utf8)))
        async let second = agent.finishedTask(HeldRequest())
        try await eventually { manual.sent.count == 2 }
        #expect(manual.sent.count == 2)
        call.events(.body(Data("1}".utf8)))
        call.events(.completed(nil))
        manual.sent.last?.respond(body: "{\"second\": 2}")
        #expect(await first.responseString == "{\"first\": 1}")
        #expect(await second.responseString == "{\"second\": 2}")
    }

    /// Starts `requests`, waits until each reached the server on its own, then releases them.
    private func expectSeparateCalls(_ requests: [HeldRequest]) async throws {
        defer { fixture.server.stop() }
        let (_, finished) = start(requests)
        try await eventually { serverHits == requests.count }
        fixture.server.publishLongPollEvents(["released"])
        let tasks = await collect(requests.count, from: finished)
        #expect(tasks.allSatisfy { $0.error == nil })
        #expect(serverHits == requests.count)
        #expect(transport.sends.withLock { $0 } == requests.count)
    }

    @Test func differentAuthorizationHeadersDoNotShareACall() async throws {
        try await expectSeparateCalls([
            HeldRequest(headers: ["Authorization": "Bearer alice"]),
            HeldRequest(headers: ["Authorization": "Bearer bob"]),
        ])
    }

    @Test func aRequestThatOptsOutMakesItsOwnCall() async throws {
        try await expectSeparateCalls(Array(repeating: HeldRequest(coalesces: false), count: 2))
    }

    @Test func postsDoNotShareACall() async throws {
        try await expectSeparateCalls(Array(repeating: HeldRequest(method: .post), count: 2))
    }

    @Test func onlyAGetWithoutADownloadPathCoalescesByDefault() {
        struct Plain: BaseRequest {
            var method: HTTPMethod = .get
            var resumableDownloadPath: String?
        }
        #expect(Plain().coalescesDuplicates)
        #expect(!Plain(method: .post).coalescesDuplicates)
        #expect(!Plain(method: .head).coalescesDuplicates)
        #expect(!Plain(resumableDownloadPath: "/tmp/file").coalescesDuplicates)
    }
}
