import Foundation
import Testing

@testable import Errand

/// `keepFresh`: a request sent again on a schedule the test's clock runs, its responses cached.
@Suite("Keeping a cached response fresh")
struct KeepFreshTests {
    /// A clock that lets each wait end when the test says, or its task's cancellation; it
    /// records what each asked for.
    final class SteppedClock: Sendable {
        private let waiting = Locked<[(id: Int, resume: CheckedContinuation<Void, any Error>)]>([])
        let asked = Locked<[TimeInterval]>([])

        var backoff: ReconnectBackoff {
            ReconnectBackoff(initialDelay: 40, maximumDelay: 100) { [self] seconds in
                let id = asked.withLock { asked in
                    asked.append(seconds)
                    return asked.count
                }
                try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { continuation in
                        waiting.withLock { $0.append((id, continuation)) }
                        if Task.isCancelled { end(id, with: CancellationError()) }
                    }
                } onCancel: {
                    end(id, with: CancellationError())
                }
            }
        }

        /// Ends the oldest wait, once there is one.
        func advance() async throws {
            try await eventually { waiting.withLock { !$0.isEmpty } }
            waiting.withLock { $0.removeFirst() }.resume.resume()
        }

        private func end(_ id: Int, with error: any Error) {
            let waiter = waiting.withLock { waiting in
                waiting.firstIndex { $0.id == id }.map { waiting.remove(at: $0) }
            }
            waiter?.resume.resume(throwing: error)
        }
    }

    struct Feed: BaseRequest {
        var url: String { "/feed" }
        var cacheTimeInSeconds: Int { 600 }
        var responseSerializerType: ResponseSerializerType { .string }
    }

    struct Uncached: BaseRequest {
        var url: String { "/feed" }
    }

    let clock = SteppedClock()
    let sends = Locked(0)
    let failing = Locked(false)
    let config = NetworkConfig()

    init() {
        config.baseUrl = "https://api.example.com"
        config.cacheDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-keep-fresh-\(UUID().uuidString)")
    }

    private func agent() -> NetworkAgent {
        NetworkAgent(
            config: config,
            transport: StubTransport { [sends, failing] _ in
                let number = sends.withLock { count in
                    count += 1
                    return count
                }
                return failing[\.self]
                    ? Response(statusCode: 503) : Response(statusCode: 200, data: Data("feed \(number)".utf8))
            })
    }

    @Test func itSendsNowThenAfterEachIntervalAndStartsAreAnsweredFromTheCache() async throws {
        defer { try? FileManager.default.removeItem(at: config.cacheDirectory) }
        let agent = agent()
        let subscription = agent.keepFresh(Feed(), every: 30, backoff: clock.backoff)
        try await eventually { clock.asked.withLock { $0.count } == 1 }
        #expect(sends[\.self] == 1)
        #expect((29...30).contains(clock.asked.withLock { $0[0] }), "the interval runs from the send's start")
        let cached = try await agent.response(Feed())
        #expect(cached.isDataFromCache && cached.string == "feed 1")

        try await clock.advance()
        try await eventually { clock.asked.withLock { $0.count } == 2 }
        #expect(sends[\.self] == 2)
        #expect(try await agent.response(Feed()).string == "feed 2")
        #expect(subscription.error == nil)
        subscription.cancel()
    }

    @Test func failuresBackOffAndTheLastOneIsKeptUntilASuccess() async throws {
        defer { try? FileManager.default.removeItem(at: config.cacheDirectory) }
        failing[\.self] = true
        let subscription = agent().keepFresh(Feed(), every: 30, backoff: clock.backoff)
        for count in 1...3 {
            try await eventually { clock.asked.withLock { $0.count } == count }
            if count < 3 { try await clock.advance() }
        }
        #expect(subscription.error == .statusCode(503))
        #expect(clock.asked.withLock { $0 } == [40, 80, 100], "each failure in a row waits longer, up to the maximum")

        failing[\.self] = false
        try await clock.advance()
        try await eventually { clock.asked.withLock { $0.count } == 4 }
        #expect(subscription.error == nil)
        #expect((29...30).contains(clock.asked.withLock { $0[3] }), "after a success, the interval again")
    }

    @Test func aRequestThatDoesNotCacheIsRefused() {
        let subscription = agent().keepFresh(Uncached(), every: 30, backoff: clock.backoff)
        #expect(subscription.error == .cacheMiss(.disabled))
        #expect(sends[\.self] == 0)
    }

    @Test func nothingIsSentWhileOffline() async throws {
        defer { try? FileManager.default.removeItem(at: config.cacheDirectory) }
        config.isOffline = true
        let subscription = agent().keepFresh(Feed(), every: 30, backoff: clock.backoff)
        try await clock.advance()
        try await eventually { clock.asked.withLock { $0.count } == 2 }
        #expect(sends[\.self] == 0)
        config.isOffline = false
        try await clock.advance()
        try await eventually { sends[\.self] == 1 }
        subscription.cancel()
    }

    @Test func cancellingOrReleasingStopsTheSendUnderWay() async throws {
        defer { try? FileManager.default.removeItem(at: config.cacheDirectory) }
        let transport = ManualTransport()
        let agent = NetworkAgent(config: config, transport: transport)
        let subscription = agent.keepFresh(Feed(), every: 30, backoff: clock.backoff)
        let first = try #require(await transport.sent(count: 1))[0]
        subscription.cancel()
        try await eventually { first.cancelled }

        var released: FreshnessSubscription? = agent.keepFresh(Feed(), every: 30, backoff: clock.backoff)
        let second = try #require(await transport.sent(count: 2))[1]
        #expect(released?.error == nil)
        released = nil
        try await eventually { second.cancelled }
    }
}
