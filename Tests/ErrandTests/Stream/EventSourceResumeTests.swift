import Foundation
import Testing

@testable import Errand

/// What a feed reader keeps to resume, and which requests an event source sends again.
@Suite("Event sources: resuming and reconnecting")
struct EventSourceResumeTests {
    struct Feed: BaseRequest {
        var method: HTTPMethod = .get
        var url: String { "/feed" }
        var responseSerializerType: ResponseSerializerType { .data }
    }

    /// Answers every connection with `body` in one piece, recording the `Last-Event-ID` each sent.
    final class Server: Sendable {
        let body: String
        private let sent = Locked<[String?]>([])

        init(body: String) {
            self.body = body
        }

        var lastEventIDs: [String?] { sent.withLock { $0 } }
        var connections: Int { lastEventIDs.count }

        func agent() -> NetworkAgent {
            NetworkAgent.testing(
                StubTransport { [self] request in
                    sent.withLock { $0.append(request.headers["Last-Event-ID"]) }
                    return Response(
                        statusCode: 200, headers: ["Content-Type": "text/event-stream"], data: Data(body.utf8))
                })
        }
    }

    @Test func theLastEventIDIsTheDeliveredEventsNotTheChunks() async throws {
        let server = Server(body: "id: 1\ndata: a\n\nid: 2\ndata: b\n\n")
        let agent = server.agent()
        let source = EventSource(Feed(), agent: agent, backoff: RecordedWaits().backoff())
        var seen: [(String, String)] = []
        for try await event in source {
            seen.append((event.data, source.lastEventID))
            if seen.count == 1 { break }
        }
        #expect(seen.map(\.0) == ["a"])
        #expect(seen.map(\.1) == ["1"], "while the app handles a, b is not yet delivered")

        // Resuming from what was kept gets b again, not the event after it.
        let resumed = EventSource(Feed(), agent: agent, lastEventID: source.lastEventID)
        for try await _ in resumed { break }
        #expect(server.lastEventIDs == [nil, "1"])
    }

    @Test func aBlockThatOnlySetsAnIDCountsOnceTheEventsBeforeItWereDelivered() async throws {
        let server = Server(body: "id: 1\ndata: a\n\nid: 7\n\ndata: b\n\nid: 8\ndata: c\n\n")
        let stream = try await server.agent().stream(Feed())
        var events = stream.events.makeAsyncIterator()
        var lastEventIDs: [String] = []
        while try await events.next() != nil { lastEventIDs.append(events.lastEventID) }
        #expect(lastEventIDs == ["1", "7", "8"])
    }

    @Test func aPostIsNotSentAgainWhenItsStreamEnds() async throws {
        let server = Server(body: "data: Hello there!\n\n")
        let waits = RecordedWaits(limit: 3)
        let source = EventSource(Feed(method: .post), agent: server.agent(), backoff: waits.backoff())
        var answers: [String] = []
        for try await event in source { answers.append(event.data) }
        #expect(answers == ["Hello there!"])
        #expect(server.connections == 1)
    }

    @Test func aPostWhoseConnectionDropsEndsWithTheDrop() async throws {
        let sent = Locked(0)
        let agent = NetworkAgent.testing(
            StubTransport { _ throws(ErrandError) in
                sent.withLock { $0 += 1 }
                throw .transport(URLError(.networkConnectionLost))
            })
        let source = EventSource(Feed(method: .post), agent: agent, backoff: RecordedWaits(limit: 3).backoff())
        await #expect(throws: ErrandError.transport(URLError(.networkConnectionLost))) {
            for try await _ in source {}
        }
        #expect(sent.withLock { $0 } == 1)
    }

    @Test func aPostReconnectsWhenTheCallerSaysSo() async throws {
        let server = Server(body: "data: tick\n\n")
        let source = EventSource(
            Feed(method: .post), agent: server.agent(), backoff: RecordedWaits().backoff(),
            resendsUnsafeRequests: true)
        var count = 0
        for try await _ in source {
            count += 1
            if count == 3 { break }
        }
        #expect(server.connections == 3)
    }

    @Test func aGetReconnectsAfterItsStreamEnds() async throws {
        let server = Server(body: "data: tick\n\n")
        let source = EventSource(Feed(), agent: server.agent(), backoff: RecordedWaits().backoff())
        var count = 0
        for try await _ in source {
            count += 1
            if count == 2 { break }
        }
        #expect(server.connections == 2)
    }
}
