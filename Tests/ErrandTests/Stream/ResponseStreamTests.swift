import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// A GET whose knobs are stored properties, for streaming.
struct StreamApi: BaseRequest {
    var url: String
    var method: HTTPMethod = .get
    var accepts: @Sendable (Int) -> Bool = { (200...299).contains($0) }
    var requestAccessories: [any RequestAccessory] = []
    var interceptors: [any RequestInterceptor] = []
    /// Ten minutes by default: a stream a test holds open must not end by the idle timeout while a
    /// loaded sanitizer run stands still; a test of the timeout sets its own.
    var timeoutInterval: TimeInterval = 600
    var maximumResponseSize: Int?

    func statusCodeValidator(_ code: Int) -> Bool { accepts(code) }
}

/// Keeps the task an accessory saw stop: how a caller of `stream()` reads a rejected response.
final class StoppedTask: RequestAccessory {
    private let task = Locked<RequestTask?>(nil)

    var value: RequestTask? { task[\.self] }

    func requestWillStart(_ task: RequestTask) {}
    func requestWillStop(_ task: RequestTask) {}
    func requestDidStop(_ task: RequestTask) { self.task[\.self] = task }
}

/// A server and an agent of their own.
struct StreamFixture {
    let server: TestServer
    let config: NetworkConfig

    init() throws {
        server = try TestServer()
        config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "errand.stream-tests.callbacks")
    }

    func makeAgent(transport: (any Transport)? = nil) -> NetworkAgent {
        NetworkAgent(config: config, transport: transport)
    }

    /// What `/download/{size}` serves.
    func body(size: Int) -> Data {
        TestServer.downloadContent(size: size, version: server.downloadVersion, range: 0..<size)
    }
}

@Suite("Response streams")
struct ResponseStreamTests {
    let fixture: StreamFixture
    let agent: NetworkAgent

    init() throws {
        fixture = try StreamFixture()
        agent = fixture.makeAgent()
    }

    @Test func chunksArriveInOrderAndMakeTheWholeBody() async throws {
        defer { fixture.server.stop() }
        let size = 3 << 20
        let stream = try await agent.stream(StreamApi(url: "/download/\(size)"))
        #expect(stream.response.statusCode == 200)
        #expect(stream.response.value(forHeader: "Content-Type") == "application/octet-stream")
        #expect(stream.response.data.isEmpty)
        var body = Data()
        var chunks = 0
        for try await chunk in stream {
            body.append(chunk)
            chunks += 1
        }
        // `elementsEqual`, not `==`: a failed `==` on megabytes makes the test library diff them for hours.
        #expect(body.elementsEqual(fixture.body(size: size)))
        #expect(chunks > 1)
        #expect(stream.task.error == nil)
        #expect(stream.task.response?.statusCode == 200)
        // The body went to the consumer: the task keeps none of it.
        #expect(stream.task.response?.data.isEmpty == true)
    }

    @Test func chunksReachTheReaderWhileTheBodyIsStillComing() async throws {
        defer { fixture.server.stop() }
        // The second event comes ten minutes after the first.
        let stream = try await agent.stream(StreamApi(url: "/sse/events?count=2&interval=600000"))
        var chunks = stream.makeAsyncIterator()
        let first = try #require(try await chunks.next())
        #expect(String(decoding: first, as: UTF8.self) == "id: 1\nevent: tick\ndata: {\"n\":1}\n\n")
        #expect(stream.task.isExecuting)
        stream.cancel()
    }

    @Test func collectThrowsPastItsLimitAndCancelsTheTransfer() async throws {
        defer { fixture.server.stop() }
        let stream = try await agent.stream(StreamApi(url: "/sse/endless"))
        await #expect(throws: ErrandError.responseTooLarge(1000)) { try await stream.collect(upTo: 1000) }
        try await eventually { !stream.task.isExecuting }
        #expect(stream.task.error == .cancelled)
    }

    @Test func aRejectedStatusThrowsAndKeepsTheStartOfItsBodyOnTheTask() async throws {
        defer { fixture.server.stop() }
        let stopped = StoppedTask()
        // A 200 the request rejects, with a body larger than what is kept.
        let request = StreamApi(url: "/download/200000", accepts: { $0 == 201 }, requestAccessories: [stopped])
        await #expect(throws: ErrandError.statusCode(200)) { try await agent.stream(request) }
        let task = try #require(stopped.value)
        #expect(task.error == .statusCode(200))
        #expect(
            task.response?.data.elementsEqual(fixture.body(size: 200_000).prefix(StreamReceiver.keptErrorBodySize))
                == true)
    }

    @Test func aRejectedStatusWhoseBodyNeverEndsThrowsOnceItsStartIsKept() async throws {
        defer { fixture.server.stop() }
        let stopped = StoppedTask()
        // A 200 the request rejects, whose body the server would send for as long as it is read.
        let request = StreamApi(url: "/sse/endless", accepts: { $0 == 201 }, requestAccessories: [stopped])
        let outcome = await outcome(within: 20) {
            await Result { () async throws(ErrandError) in try await self.agent.stream(request) }
        }
        guard case .failure(.statusCode(200))? = outcome else {
            Issue.record("ended with \(String(describing: outcome))")
            return
        }
        try await eventually { stopped.value != nil }
        #expect(stopped.value?.response?.data.count == StreamReceiver.keptErrorBodySize)
    }

    @Test func aRequestWithAMaximumResponseSizeOfItsOwnKeepsARejectedBodyWhole() async throws {
        defer { fixture.server.stop() }
        let stopped = StoppedTask()
        var request = StreamApi(url: "/download/200000", accepts: { $0 == 201 }, requestAccessories: [stopped])
        request.maximumResponseSize = 200_000
        await #expect(throws: ErrandError.statusCode(200)) { try await agent.stream(request) }
        // Told of the stop around the delivery, which may come first.
        try await eventually { stopped.value != nil }
        #expect(stopped.value?.response?.data == fixture.body(size: 200_000))

        // Past that size, the body is as much too large as any body the agent would hold.
        request.maximumResponseSize = 199_999
        await #expect(throws: ErrandError.responseTooLarge(199_999)) { try await agent.stream(request) }
    }

    @Test func aServerErrorThrowsStatusCode() async throws {
        defer { fixture.server.stop() }
        await #expect(throws: ErrandError.statusCode(500)) { try await agent.stream(StreamApi(url: "/status/500")) }
    }

    @Test func aFailedAttemptBeforeTheBodyIsRetried() async throws {
        defer { fixture.server.stop() }
        let request = StreamApi(
            url: "/flaky/stream?failures=2",
            interceptors: [RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.01)])
        let stream = try await agent.stream(request)
        #expect(stream.response.statusCode == 200)
        #expect(stream.task.attemptCount == 3)
        _ = try await stream.collect(upTo: 1 << 20)
        #expect(fixture.server.flakyCallCount(key: "stream") == 3)
    }

    @Test func aConnectionLostMidBodyEndsIterationWithTheTransportErrorAndIsNotRetried() async throws {
        defer { fixture.server.stop() }
        let request = StreamApi(
            url: "/download/100000?drop_after=30000",
            interceptors: [RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.01)])
        let stream = try await agent.stream(request)
        var received = Data()
        await #expect {
            for try await chunk in stream { received.append(chunk) }
        } throws: { error in
            guard let error = error as? ErrandError, case .transport = error else { return false }
            return true
        }
        #expect(received.elementsEqual(fixture.body(size: 100_000).prefix(30000)))
        #expect(stream.task.attemptCount == 1)
    }

    @Test func leavingTheLoopEarlyCancelsTheTransferWhileTheStreamIsStillHeld() async throws {
        defer { fixture.server.stop() }
        let stream = try await agent.stream(StreamApi(url: "/sse/endless"))
        for try await _ in stream { break }
        try await eventually { !stream.task.isExecuting }
        #expect(stream.task.error == .cancelled)
        withExtendedLifetime(stream) {}
    }

    @Test func aStreamIsReadOnce() async throws {
        defer { fixture.server.stop() }
        let stream = try await agent.stream(StreamApi(url: "/download/100"))
        #expect(try await stream.collect(upTo: 1000).count == 100)
        await #expect {
            for try await _ in stream {}
        } throws: { error in
            guard let error = error as? ErrandError, case .serialization(let reason) = error else { return false }
            return reason.contains("consumed once")
        }
    }

    @Test func cancellingTheReadingTaskThrowsCancelledAndStopsTheTransfer() async throws {
        defer { fixture.server.stop() }
        // The second event comes ten minutes after the first: the body cannot end before the cancel.
        let stream = try await agent.stream(StreamApi(url: "/sse/events?count=2&interval=600000"))
        let reader = Task {
            do throws(ErrandError) {
                for try await _ in stream {}
                return ErrandError?.none
            } catch {
                return error
            }
        }
        reader.cancel()
        #expect(await reader.value == .cancelled)
        try await eventually { !stream.task.isExecuting }
        #expect(stream.task.error == .cancelled)
    }

    @Test func cancellingTheCallerBeforeTheHeadCancelsTheRequest() async throws {
        defer { fixture.server.stop() }
        let opening = Task { () throws(ErrandError) -> ResponseStream in
            // Held ten minutes: beside the whole suite under the sanitizer, the cancel has come
            // after the fault's usual 30 s.
            try await agent.stream(StreamApi(url: "/fault/endless-headers?hold_s=600"))
        }
        try await eventually { fixture.server.receivedRequests(path: "/fault").count == 1 }
        opening.cancel()
        await #expect(throws: ErrandError.cancelled) { try await opening.value }
    }

    @Test func progressCountsTheBytesHandedToTheReaderAndEndsAtTheBodysSize() async throws {
        defer { fixture.server.stop() }
        let stream = try await agent.stream(StreamApi(url: "/download/300000"))
        _ = try await stream.collect(upTo: 1 << 20)
        var last: TransferProgress?
        for await progress in stream.task.downloadProgress { last = progress }
        #expect(last == TransferProgress(completedBytes: 300_000, totalBytes: 300_000))
    }

    @Test func nothingOutlivesAStreamThatWasReadAndDropped() async throws {
        defer { fixture.server.stop() }
        weak var task: RequestTask?
        weak var buffer: StreamBuffer?
        do {
            let stream = try await agent.stream(StreamApi(url: "/sse/events?count=2"))
            task = stream.task
            buffer = stream.buffer
            for try await _ in stream.lines {}
        }
        try await eventually { task == nil && buffer == nil }
    }

    @Test func nothingOutlivesAStreamLeftEarly() async throws {
        defer { fixture.server.stop() }
        weak var task: RequestTask?
        do {
            let stream = try await agent.stream(StreamApi(url: "/sse/events?count=2&interval=600000"))
            task = stream.task
            for try await _ in stream.lines { break }
        }
        try await eventually { task == nil }
    }

    @Test func anOpenStreamDoesNotHoldAPlaceInTheQueue() async throws {
        defer { fixture.server.stop() }
        agent.maxConcurrentRequests = 1
        let stream = try await agent.stream(StreamApi(url: "/sse/events?count=2&interval=600000"))
        // With one place, a request behind the open stream still runs.
        let response = try await agent.response(StreamApi(url: "/get"))
        #expect(response.statusCode == 200)
        stream.cancel()
    }
}
