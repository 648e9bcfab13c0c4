import Foundation
import Testing

@testable import Errand

/// DESIGN's promise to monitors, kept whatever the threads: every failed attempt is reported,
/// and `didFinish` comes once and last.
@Suite("Event monitors: the contract at the edges")
struct MonitorContractTests {
    /// Each task's events by its tag.
    final class TaggedMonitor: EventMonitor {
        private let lines = Locked<[Int: [String]]>([:])

        func events(of tag: Int) -> [String] { lines.withLock { $0[tag] ?? [] } }
        var all: [Int: [String]] { lines.withLock { $0 } }

        func requestDidStart(_ task: RequestTask) { append("start", task) }
        func request(_ task: RequestTask, willSend request: TransportRequest) { append("send", task) }
        func request(_ task: RequestTask, didReceive response: Response) { append("head", task) }
        func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool) {
            append("fail \(error)\(willRetry ? ", will retry" : "")", task)
        }
        func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
            append("finish", task)
        }

        private func append(_ line: String, _ task: RequestTask) {
            lines.withLock { $0[task.tag, default: []].append(line) }
        }
    }

    /// Holds every retry decision until the test gives it.
    final class HeldRetry: RequestInterceptor {
        private let held = Locked<[CheckedContinuation<RetryDecision, Never>]>([])

        var count: Int { held.withLock { $0.count } }

        func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision {
            await withCheckedContinuation { continuation in held.withLock { $0.append(continuation) } }
        }

        func decide(_ index: Int, _ decision: RetryDecision) {
            held.withLock { $0[index] }.resume(returning: decision)
        }
    }

    struct Get: BaseRequest {
        var url: String { "/flaky" }
    }

    @Test func aRetryDecidedAfterTheCancelIsNotReportedAfterDidFinish() async throws {
        let monitor = TaggedMonitor()
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        let held = HeldRetry()
        agent.config.addEventMonitor(monitor)
        agent.config.addInterceptor(held)
        let rounds = 50
        for round in 0..<rounds {
            let task = agent.start(Get(), tag: round)
            let sent = try #require(await transport.sent(count: round + 1))
            sent[round].respond(status: 503)
            try await eventually { held.count == round + 1 }
            task.cancel()
            try await eventually { monitor.events(of: round).last == "finish" }
            held.decide(round, .retry)
        }
        // A last request's events come after whatever the cancelled ones still had to say.
        let last = agent.start(Get(), tag: rounds)
        try #require(await transport.sent(count: rounds + 1))[rounds].respond()
        _ = try await last.value
        try await eventually { monitor.events(of: rounds).last == "finish" }
        for round in 0..<rounds {
            let events = monitor.events(of: round)
            #expect(events.last == "finish", "task \(round): \(events)")
            #expect(events.filter { $0 == "finish" }.count == 1, "task \(round): \(events)")
        }
    }

    @Test func aHeadQueuedWhenTheCancelLandsIsNotReportedAfterDidFinish() async throws {
        let monitor = TaggedMonitor()
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        agent.config.addEventMonitor(monitor)
        let task = agent.start(Get(), tag: 1)
        let sent = try #require(await transport.sent(count: 1))[0]
        task.cancel()
        // What a transport had queued before it saw the cancel still arrives.
        sent.events(.responseHead(statusCode: 200, headers: [:]))
        let last = agent.start(Get(), tag: 2)
        try #require(await transport.sent(count: 2))[1].respond()
        _ = try await last.value
        try await eventually { monitor.events(of: 2).last == "finish" }
        #expect(monitor.events(of: 1) == ["start", "send", "fail \(ErrandError.cancelled)", "finish"])
    }

    struct Feed: BaseRequest {
        var url: String { "/feed" }
    }

    @Test func aStreamCutOffAfterItsBodyBeganReportsTheFailedAttempt() async throws {
        let monitor = TaggedMonitor()
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        agent.config.addEventMonitor(monitor)
        async let opened = agent.stream(Feed())
        let sent = try #require(await transport.sent(count: 1))[0]
        sent.events(.responseHead(statusCode: 200, headers: ["Content-Type": "text/plain"]))
        let stream = try await opened
        sent.events(.body(Data("first line\n".utf8)))
        let cut = ErrandError.transport(URLError(.networkConnectionLost))
        sent.events(.completed(cut))
        await #expect(throws: cut) { for try await _ in stream.lines {} }
        try await eventually { monitor.events(of: 0).last == "finish" }
        #expect(monitor.events(of: 0) == ["start", "send", "head", "fail \(cut)", "finish"])
    }
}
