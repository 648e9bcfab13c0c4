import Dispatch
import Foundation
import Testing

@testable import Errand

@Suite("The debug log warns when callbacks wait for a main queue nothing runs")
@MainActor
struct MainQueueWatchTests {
    struct Request: BaseRequest {
        var url: String { "/ping" }
    }

    @Test func aBlockedMainThreadIsReportedOnce() async throws {
        let warnings = Locked<[String]>([])
        let warned = DispatchSemaphore(value: 0)
        let watch = MainQueueWatch(threshold: 0.2) { line in
            warnings.withLock { $0.append(line) }
            warned.signal()
        }
        let config = NetworkConfig()
        config.baseUrl = "http://example.invalid"
        config.callbackQueue = .main
        config.debugLogEnabled = true
        let transport = StubTransport { _ in Response(statusCode: 200, data: Data("{}".utf8)) }
        let agent = NetworkAgent(config: config, transport: transport, retryTimer: .dispatch, mainQueueWatch: watch)
        let first = agent.start(Request())
        let second = agent.start(Request())

        // What a command-line tool waiting on a semaphore does: the callbacks cannot run meanwhile.
        let warningArrived = blockMainThread(until: warned, timeout: 10)

        #expect(warningArrived)
        _ = try await first.value
        _ = try await second.value
        let lines = warnings.withLock { $0 }
        #expect(lines.count == 1)
        let line = try #require(lines.first)
        #expect(line.hasPrefix("[Errand] warning: 2 callback(s) waited"), "\(line)")
        #expect(line.contains("dispatchMain()") && line.contains("callbackQueue"))
        #expect(line.split(whereSeparator: \.isNewline).count == 1)
        #expect(watch.enqueued() == nil, "once warned, the watch stops timing callbacks")
    }

    /// Blocks the calling (main) thread on `semaphore`; `false` when `timeout` seconds passed first.
    private func blockMainThread(until semaphore: DispatchSemaphore, timeout: Double) -> Bool {
        semaphore.wait(timeout: .now() + timeout) == .success
    }
}
