import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

@Suite("Server-Sent Events")
struct EventSourceTests {
    let fixture: StreamFixture
    let agent: NetworkAgent

    init() throws {
        fixture = try StreamFixture()
        agent = fixture.makeAgent()
    }

    /// The events `/sse/events` sends for `numbers`.
    static func ticks(_ numbers: ClosedRange<Int>) -> [ServerSentEvent] {
        numbers.map { ServerSentEvent(id: String($0), event: "tick", data: #"{"n":\#($0)}"#) }
    }

    /// The first `count` events of `source`, then stops reading.
    static func first(_ count: Int, of source: EventSource) async throws -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for try await event in source {
            events.append(event)
            if events.count == count { break }
        }
        return events
    }

    struct Tick: Decodable, Equatable {
        let n: Int
    }

    @Test func aStreamsEventsAreParsedAsTheyArrive() async throws {
        defer { fixture.server.stop() }
        let stream = try await agent.stream(StreamApi(url: "/sse/events?count=3&retry=1500"))
        var events: [ServerSentEvent] = []
        for try await event in stream.events { events.append(event) }
        #expect(events == Self.ticks(1...3))
        #expect(try events.map { try $0.decode(Tick.self) } == [Tick(n: 1), Tick(n: 2), Tick(n: 3)])
    }

    @Test func linesComeWholeWhateverTheChunksAndLineEnds() async throws {
        defer { fixture.server.stop() }
        let stream = try await agent.stream(StreamApi(url: "/lines?count=20&bytes=40&line_end=crlf&piece=7"))
        var lines: [String] = []
        for try await line in stream.lines { lines.append(line) }
        #expect(lines == (1...20).map { TestServer.linesContent(line: $0, bytes: 40) })
    }

    @Test func httpbinsJSONLinesDecodeOneByOne() async throws {
        defer { fixture.server.stop() }
        let stream = try await agent.stream(StreamApi(url: "/stream/5"))
        var ids: [Int] = []
        for try await line in stream.lines {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            ids.append(try #require(object["id"] as? Int))
        }
        #expect(ids == [0, 1, 2, 3, 4])
    }

    @Test func aLineLongerThanTheLimitThrowsAndCancelsTheTransfer() async throws {
        defer { fixture.server.stop() }
        fixture.config.maximumResponseSize = 1 << 20
        let stream = try await agent.stream(StreamApi(url: "/sse/long-line?bytes=\(1 << 30)"))
        await #expect(throws: ErrandError.responseTooLarge(1 << 20)) {
            for try await _ in stream.events {}
        }
        try await eventually { !stream.task.isExecuting }
        #expect(stream.task.error == .cancelled)
    }

    @Test func anEventCutOffByTheEndOfTheBodyIsDropped() async throws {
        defer { fixture.server.stop() }
        // `data: {"n":1}\n\n` is 15 bytes: 100 bytes hold six events and the start of a seventh.
        let stream = try await agent.stream(StreamApi(url: "/sse/endless?size=100"))
        var numbers: [String] = []
        for try await event in stream.events { numbers.append(event.data) }
        #expect(numbers == (1...6).map { #"{"n":\#($0)}"# })
    }

    @Test func anEventSourceResumesAfterADropWithLastEventIDAfterTheServersRetryTime() async throws {
        defer { fixture.server.stop() }
        let waits = RecordedWaits()
        let source = EventSource(
            StreamApi(url: "/sse/events?count=2&drop=1&retry=1500"), agent: agent,
            backoff: waits.backoff(initialDelay: 0.25, maximumDelay: 2))
        let events = try await Self.first(5, of: source)
        #expect(events.map(\.id) == ["1", "2", "3", "4", "5"])
        #expect(events.first?.retry == nil)
        #expect(fixture.server.lastEventIDs() == [nil, "2", "4"])
        #expect(waits.recorded == [1.5, 1.5])
        #expect(source.lastEventID == "5")
    }

    @Test func anEventSourceReconnectsAfterACleanEndToo() async throws {
        defer { fixture.server.stop() }
        let waits = RecordedWaits()
        let source = EventSource(
            StreamApi(url: "/sse/events?count=2"), agent: agent,
            backoff: waits.backoff(initialDelay: 0.25, maximumDelay: 2))
        let events = try await Self.first(3, of: source)
        #expect(events == Self.ticks(1...3))
        #expect(fixture.server.lastEventIDs() == [nil, "2"])
        // No `retry` from the server: the back-off's first delay.
        #expect(waits.recorded == [0.25])
    }

    @Test func aLastEventIDGivenUpFrontResumesTheFeed() async throws {
        defer { fixture.server.stop() }
        let source = EventSource(StreamApi(url: "/sse/events?count=2"), agent: agent, lastEventID: "41")
        #expect(try await Self.first(1, of: source) == Self.ticks(42...42))
        #expect(fixture.server.lastEventIDs() == ["41"])
    }

    @Test func theConnectionAsksForAnEventStream() async throws {
        defer { fixture.server.stop() }
        let source = EventSource(StreamApi(url: "/sse/events?count=1"), agent: agent)
        _ = try await Self.first(1, of: source)
        let sent = try #require(fixture.server.receivedRequests(path: "/sse/").first)
        #expect(sent.header("Accept") == "text/event-stream")
        #expect(sent.header("Cache-Control") == "no-cache")
    }

    @Test func a204EndsTheFeedNormally() async throws {
        defer { fixture.server.stop() }
        let source = EventSource(StreamApi(url: "/sse/events?status=204"), agent: agent)
        #expect(try await Self.first(1, of: source).isEmpty)
        #expect(fixture.server.lastEventIDs().count == 1)
    }

    @Test func aRejectedStatusEndsTheFeedWithItsErrorAndNoReconnect() async throws {
        defer { fixture.server.stop() }
        let source = EventSource(StreamApi(url: "/sse/events?status=500"), agent: agent)
        await #expect(throws: ErrandError.statusCode(500)) { try await Self.first(1, of: source) }
        #expect(fixture.server.lastEventIDs().count == 1)
    }

    @Test func aWrongContentTypeEndsTheFeedWithoutReconnecting() async throws {
        defer { fixture.server.stop() }
        let source = EventSource(StreamApi(url: "/sse/events?content_type=text/plain"), agent: agent)
        await #expect {
            try await Self.first(1, of: source)
        } throws: { error in
            guard let error = error as? ErrandError, case .serialization(let reason) = error else { return false }
            return reason.contains("text/plain")
        }
        #expect(fixture.server.lastEventIDs().count == 1)
    }

    @Test func failedReconnectsWaitLongerAndLonger() async throws {
        fixture.server.stop()
        // Refused connections; the fourth wait throws, as a cancelled sleep would, ending the feed.
        let waits = RecordedWaits(limit: 4)
        let source = EventSource(
            StreamApi(url: "/sse/events"), agent: agent, backoff: waits.backoff(initialDelay: 0.25, maximumDelay: 2))
        #expect(try await Self.first(1, of: source).isEmpty)
        #expect(waits.recorded == [0.25, 0.5, 1, 2])
    }

    @Test func cancellingTheReadingTaskEndsTheFeedNormally() async throws {
        defer { fixture.server.stop() }
        let source = EventSource(StreamApi(url: "/sse/events?count=100&interval=600000"), agent: agent)
        let firstEvent = AsyncStream<Void>.makeStream()
        let reader = Task {
            var count = 0
            for try await _ in source {
                count += 1
                firstEvent.continuation.yield()
            }
            return count
        }
        for await _ in firstEvent.stream { break }
        reader.cancel()
        #expect(try await reader.value == 1)
    }

    @Test func anEndlessFeedReadSlowlyStaysWithinTheBuffer() async throws {
        defer { fixture.server.stop() }
        let stream = try await agent.stream(StreamApi(url: "/sse/endless"))
        var events = stream.events.makeAsyncIterator()
        var count = 0
        // 32 MiB of 15-byte events, the reader stalling now and then as a busy consumer would.
        while count < 2_000_000, let event = try await events.next() {
            count += 1
            if count % 500_000 == 0 { try await Task.sleep(for: .milliseconds(50)) }
            if count == 1 { #expect(event.data == #"{"n":1}"#) }
        }
        stream.cancel()
        #expect(stream.buffer.peakBufferedBytes <= StreamReceiver.bufferLimit + (1 << 20) + (128 << 10))
    }
}
