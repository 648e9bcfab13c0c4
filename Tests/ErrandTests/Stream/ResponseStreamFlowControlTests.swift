import ErrandScenarios
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A consumer that falls behind pauses the transfer instead of piling the body up, under either
/// transport, and nothing else waits for it meanwhile.
@Suite("Response streams: flow control", .enabled(if: CurlTransport.isAvailable))
struct ResponseStreamFlowControlTests {
    /// The most a paused stream holds: its buffer, what the transport had accepted when it was told
    /// to pause, and what libcurl had in hand then. On Linux ``URLSessionTransport`` streams
    /// through libcurl too, so the bound is the same.
    static let peakBufferedBytes = StreamReceiver.bufferLimit + (1 << 20) + 2 * CurlTransfer.receiveBufferSize

    @Test(arguments: FlowControlTransport.allCases)
    func aStalledConsumerPausesTheTransferAndAllOfTheBodyArrivesAfter(_ kind: FlowControlTransport) async throws {
        let fixture = try StreamFixture()
        defer { fixture.server.stop() }
        let transport = kind.make(fixture)
        let agent = fixture.makeAgent(transport: transport)
        let size = 32 << 20
        let stream = try await agent.stream(StreamApi(url: "/download/\(size)"))
        var chunks = stream.makeAsyncIterator()
        var received = try #require(try await chunks.next()).count
        // The consumer stalls: the buffer fills to its limit and the transfer pauses.
        try await eventually { stream.buffer.isPaused }
        // The consumer stays behind a while longer: what was on its way when the transfer was
        // told to pause still arrives, and nothing after it, however long the wait.
        try await Task.sleep(for: .milliseconds(300))
        #expect(stream.buffer.peakBufferedBytes <= Self.peakBufferedBytes)
        while let chunk = try await chunks.next() { received += chunk.count }
        #expect(received == size)
        #expect(stream.buffer.peakBufferedBytes <= Self.peakBufferedBytes)
        #if canImport(FoundationNetworking)
            if let session = transport as? URLSessionTransport { #expect(session.curlTransport != nil) }
        #endif
    }

    @Test(arguments: FlowControlTransport.allCases)
    func cancellingFromAnotherThreadWhilePausedEndsTheStreamAtOnce(_ kind: FlowControlTransport) async throws {
        let fixture = try StreamFixture()
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent(transport: kind.make(fixture))
        let stream = try await agent.stream(StreamApi(url: "/download/\(64 << 20)"))
        var chunks = stream.makeAsyncIterator()
        _ = try await chunks.next()
        try await eventually { stream.buffer.isPaused }
        let clock = ContinuousClock()
        let cancelled = clock.now
        try await onOwnThread { stream.cancel() }
        await #expect(throws: ErrandError.cancelled) { try await chunks.next() }
        // Milliseconds alone; beside the whole suite, as long as two busy cooperative threads take
        // to resume this test (12–16 s seen). A cancel that waited for the paused transfer would
        // take its 60-second timeout, or forever.
        #expect(clock.now - cancelled < timingBound(.seconds(30)))
        try await eventually { !stream.task.isExecuting }
        #expect(stream.task.error == .cancelled)
    }

    @Test(arguments: FlowControlTransport.allCases)
    func otherRequestsOfTheAgentCompleteWhileAStreamIsPaused(_ kind: FlowControlTransport) async throws {
        let fixture = try StreamFixture()
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent(transport: kind.make(fixture))
        let size = 32 << 20
        let stream = try await agent.stream(StreamApi(url: "/download/\(size)"))
        var chunks = stream.makeAsyncIterator()
        var received = try #require(try await chunks.next()).count
        try await eventually { stream.buffer.isPaused }
        // A short timeout: a request held up behind the paused stream fails instead of hanging.
        let response = try await agent.response(StreamApi(url: "/get", timeoutInterval: 10))
        #expect(response.statusCode == 200)
        let other = try await agent.stream(StreamApi(url: "/download/100000", timeoutInterval: 10))
        #expect(try await other.collect(upTo: 1 << 20).elementsEqual(fixture.body(size: 100_000)))
        #expect(stream.buffer.isPaused)
        while let chunk = try await chunks.next() { received += chunk.count }
        #expect(received == size)
    }

    @Test(arguments: FlowControlTransport.allCases)
    func aPausedStreamOutlivesItsIdleTimeout(_ kind: FlowControlTransport) async throws {
        let fixture = try StreamFixture()
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent(transport: kind.make(fixture))
        let size = 8 << 20
        // Under a sanitizer, a loaded machine can leave an unpaused transfer silent for 2 seconds.
        let timeout = ProcessInfo.processInfo.environment["ERRAND_SANITIZER"] == nil ? 2.0 : 6.0
        let stream = try await agent.stream(StreamApi(url: "/download/\(size)", timeoutInterval: timeout))
        var chunks = stream.makeAsyncIterator()
        var received = try #require(try await chunks.next()).count
        try await eventually { stream.buffer.isPaused }
        // Silent for longer than the timeout allows, but the silence is the consumer's, not the server's.
        try await Task.sleep(for: .seconds(timeout * 2.5))
        while let chunk = try await chunks.next() { received += chunk.count }
        #expect(received == size)
        #expect(stream.task.error == nil)
    }

    @Test func aStreamStaysInTheSessionWhenTheConfigurationHasAProtocolOfItsOwn() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [CannedStreamProtocol.self] + (configuration.protocolClasses ?? [])
        let transport = URLSessionTransport(configuration: configuration)
        let config = NetworkConfig()
        config.baseUrl = "http://\(CannedStreamProtocol.host)"
        config.callbackQueue = DispatchQueue(label: "errand.flow-control-tests.callbacks")
        let agent = NetworkAgent(config: config, transport: transport)
        let stream = try await agent.stream(StreamApi(url: "/feed"))
        #expect(try await stream.collect(upTo: 1 << 10) == CannedStreamProtocol.body)
        #if canImport(FoundationNetworking)
            #expect(transport.curlTransport == nil)
        #endif
    }
}

/// What a stream holds on to is bounded by what its transport says, and released with it.
@Suite("Response streams: buffer and release")
struct ResponseStreamReleaseTests {
    @Test func aStreamReleasedUnreadCancelsItsTransfer() async throws {
        let fixture = try StreamFixture()
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent()
        let task = try await Self.openAndLeave(agent)
        try await eventually { !task.isExecuting }
        #expect(task.error == .cancelled)
        // Nothing is left running that a later cancelAllRequests() would have had to end.
        #expect(agent.pipeline.scheduler.liveTasks.isEmpty)
    }

    /// What a caller that checks the status and returns writes: the stream is never iterated.
    private static func openAndLeave(_ agent: NetworkAgent) async throws -> RequestTask {
        let stream = try await agent.stream(StreamApi(url: "/sse/endless"))
        guard stream.response.statusCode == 299 else { return stream.task }
        Issue.record("the endless feed answers 200")
        return stream.task
    }

    @Test(.enabled(if: CurlTransport.isAvailable))
    func aStreamHoldsNoMoreThanItsCurlTransportsBufferLimit() async throws {
        let fixture = try StreamFixture()
        defer { fixture.server.stop() }
        let limit = 64 << 10
        let agent = fixture.makeAgent(transport: CurlTransport(bufferLimit: limit))
        let stream = try await agent.stream(StreamApi(url: "/download/\(32 << 20)"))
        var chunks = stream.makeAsyncIterator()
        _ = try await chunks.next()
        try await eventually { stream.buffer.isPaused }
        // The stream's buffer, what libcurl accepted when told to pause and what it had in hand.
        #expect(stream.buffer.peakBufferedBytes <= 2 * limit + 2 * CurlTransfer.receiveBufferSize)
        stream.cancel()
    }
}
