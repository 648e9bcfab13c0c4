import Foundation
import Testing

@testable import Errand

/// The sse-starlette app these tests run against (`SSEServer/sse_app.py`), e.g.
/// `http://127.0.0.1:8081`; `.ci/run` starts one.
private let sseURL = ProcessInfo.processInfo.environment["ERRAND_SSE_URL"].flatMap { $0.isEmpty ? nil : $0 }

/// A GET of the interop server.
private struct FeedApi: BaseRequest {
    var url: String
}

/// Waits that return at once, recording each delay asked for.
private final class Waits: Sendable {
    private let delays = Locked<[TimeInterval]>([])

    var recorded: [TimeInterval] { delays.withLock { $0 } }

    var backoff: ReconnectBackoff {
        ReconnectBackoff(initialDelay: 0.5) { [self] seconds in delays.withLock { $0.append(seconds) } }
    }
}

@Suite(
    "Server-Sent Events against sse-starlette (ERRAND_SSE_URL)",
    .enabled(if: sseURL != nil, "ERRAND_SSE_URL is not set: the SSE interop suite is skipped"))
struct SSEInteropTests {
    let agent: NetworkAgent

    init() throws {
        let config = NetworkConfig()
        config.baseUrl = try #require(sseURL)
        agent = NetworkAgent(config: config)
    }

    struct Tick: Decodable, Equatable {
        let n: Int
    }

    @Test func eventsWithIDsAndRetryAreParsed() async throws {
        let stream = try await agent.stream(FeedApi(url: "/events?count=3&retry=1500"))
        #expect(stream.response.value(forHeader: "Content-Type")?.hasPrefix("text/event-stream") == true)
        var events: [ServerSentEvent] = []
        for try await event in stream.events { events.append(event) }
        #expect(events.map(\.id) == ["1", "2", "3"])
        #expect(events.map(\.event) == ["tick", "tick", "tick"])
        #expect(events.map(\.retry) == [1500, nil, nil])
        #expect(try events.map { try $0.decode(Tick.self) } == [Tick(n: 1), Tick(n: 2), Tick(n: 3)])
    }

    @Test func aDroppedFeedResumesWithLastEventIDAfterTheServersRetryTime() async throws {
        let waits = Waits()
        let source = EventSource(
            FeedApi(url: "/resume?count=6&drop_after=3&retry=100"), agent: agent, backoff: waits.backoff)
        var ids: [String?] = []
        for try await event in source {
            ids.append(event.id)
            if ids.count == 6 { break }
        }
        // The server numbers from the Last-Event-ID it was sent: 4 after 3, not 1 again.
        #expect(ids == ["1", "2", "3", "4", "5", "6"])
        #expect(waits.recorded == [0.1])
        #expect(source.lastEventID == "6")
    }

    @Test func noContentEndsTheFeed() async throws {
        var count = 0
        for try await _ in EventSource(FeedApi(url: "/empty"), agent: agent) { count += 1 }
        #expect(count == 0)
    }

    @Test func aWrongContentTypeEndsTheFeedWithAnError() async throws {
        await #expect {
            for try await _ in EventSource(FeedApi(url: "/wrongtype"), agent: agent) {}
        } throws: { error in
            guard let error = error as? ErrandError, case .serialization(let reason) = error else { return false }
            return reason.contains("text/plain")
        }
    }

    @Test func aServerErrorEndsTheFeedWithItsStatus() async throws {
        await #expect(throws: ErrandError.statusCode(500)) {
            for try await _ in EventSource(FeedApi(url: "/fail"), agent: agent) {}
        }
    }
}

@Test(
    "SSE interop suite is not silently skipped in CI", .enabled(if: ProcessInfo.processInfo.environment["CI"] == "true")
)
func sseServerIsConfiguredInCI() {
    #expect(sseURL != nil, "CI must run the SSE interop suite: set ERRAND_SSE_URL")
}
