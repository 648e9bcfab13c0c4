import Errand
import ErrandMetrics
import Foundation
import MetricsTestKit
import Testing

/// The metrics `MetricsMonitor` produces for a success, a failure, a retry and a cached answer,
/// and the bound on their dimensions.
@Suite("MetricsMonitor")
struct MetricsMonitorTests {
    struct Request: BaseRequest {
        var url: String
        var method = HTTPMethod.get
        var arguments: [String: any Sendable]?
        var cacheTimeInSeconds = 0
        var interceptors: [any RequestInterceptor] = []
        var responseSerializerType: ResponseSerializerType { .data }
    }

    let metrics = TestMetrics()
    let finished = FinishedCount()

    func makeAgent(host: String = "api.example.com", maximumHosts: Int = 32) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = "https://\(host)"
        config.cacheDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-metrics-tests-\(UUID().uuidString)")
        config.addEventMonitor(Observed(MetricsMonitor(maximumHosts: maximumHosts, factory: metrics), finished))
        return NetworkAgent(
            config: config,
            transport: StubTransport { request in
                request.url.path == "/broken"
                    ? Response(statusCode: 503) : Response(statusCode: 200, data: Data("0123456789".utf8))
            })
    }

    @Test func aSuccessIsCountedTimedAndMeasuredWithoutItsPath() async throws {
        let agent = makeAgent()
        _ = try await agent.response(Request(url: "/items/42", method: .post, arguments: ["name": "x"]))
        try await finished.waitFor(1)

        let dimensions = [("http.request.method", "POST"), ("server.address", "api.example.com")]
        #expect(try metrics.expectCounter("errand.requests", dimensions + [("status_class", "2xx")]).totalValue == 1)
        #expect(
            try metrics.expectTimer("errand.request.duration", dimensions + [("status_class", "2xx")]).values.count == 1
        )
        #expect(try metrics.expectCounter("errand.response.body.bytes", dimensions).totalValue == 10)
        #expect(try metrics.expectCounter("errand.request.body.bytes", dimensions).totalValue > 0)
        #expect(metrics.counters.allSatisfy { counter in !counter.dimensions.contains { $0.1.contains("/items") } })
    }

    @Test func aFailureIsCountedByItsTypeAndARetryToo() async throws {
        let agent = makeAgent()
        let request = Request(url: "/broken", interceptors: [RetryPolicy(maxAttempts: 2, baseDelay: 0)])
        _ = try? await agent.response(request)
        try await finished.waitFor(1)

        let dimensions = [("http.request.method", "GET"), ("server.address", "api.example.com")]
        #expect(try metrics.expectCounter("errand.failures", dimensions + [("error.type", "503")]).totalValue == 1)
        #expect(try metrics.expectCounter("errand.retries", dimensions).totalValue == 1)
        #expect(try metrics.expectCounter("errand.requests", dimensions + [("status_class", "5xx")]).totalValue == 1)
    }

    @Test func aCachedAnswerIsItsOwnClassAndMovesNoBytes() async throws {
        let agent = makeAgent()
        let request = Request(url: "/items", cacheTimeInSeconds: 60)
        _ = try await agent.response(request)
        _ = try await agent.response(request)
        try await finished.waitFor(2)

        // The cache answered without a server: no address, and no bytes moved.
        let cached = [("http.request.method", "GET"), ("server.address", "none"), ("status_class", "cached")]
        #expect(try metrics.expectCounter("errand.requests", cached).totalValue == 1)
        let dimensions = [("http.request.method", "GET"), ("server.address", "api.example.com")]
        #expect(try metrics.expectCounter("errand.response.body.bytes", dimensions).totalValue == 10)
    }

    @Test func hostsPastTheBoundShareOneValue() async throws {
        let config = NetworkConfig()
        config.addEventMonitor(Observed(MetricsMonitor(maximumHosts: 2, factory: metrics), finished))
        let agent = NetworkAgent(config: config, transport: StubTransport { _ in Response(statusCode: 204) })
        for host in ["a.example", "b.example", "c.example", "d.example"] {
            _ = try await agent.response(Request(url: "https://\(host)/"))
        }
        try await finished.waitFor(4)

        let hosts = Set(
            metrics.counters(label: "errand.requests").compactMap { counter in
                counter.dimensions.first { $0.0 == "server.address" }?.1
            })
        #expect(hosts == ["a.example", "b.example", "_OTHER"])
    }
}

/// A monitor, and then a count of the requests it has been told finished: each monitor has a
/// queue of its own, so a count beside it would not say the monitor is done.
struct Observed: EventMonitor {
    let monitor: MetricsMonitor
    let finished: FinishedCount

    init(_ monitor: MetricsMonitor, _ finished: FinishedCount) {
        self.monitor = monitor
        self.finished = finished
    }

    func requestDidStart(_ task: RequestTask) { monitor.requestDidStart(task) }

    func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool) {
        monitor.request(task, didFailAttempt: error, willRetry: willRetry)
    }

    func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
        monitor.request(task, didFinish: result)
        finished.recordFinish()
    }
}

/// Counts finished requests, and waits for a number of them.
final class FinishedCount: @unchecked Sendable {  // `lock` guards `count` and `waiters`.
    private let lock = NSLock()
    private var count = 0
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    func recordFinish() {
        let ready = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            count += 1
            let met = waiters.filter { $0.count <= count }
            waiters.removeAll { $0.count <= count }
            return met.map(\.continuation)
        }
        ready.forEach { $0.resume() }
    }

    /// Returns once `expected` requests have finished, as monitors are told it.
    func waitFor(_ expected: Int) async throws {
        await withCheckedContinuation { continuation in
            lock.withLock {
                if count >= expected {
                    continuation.resume()
                } else {
                    waiters.append((expected, continuation))
                }
            }
        }
    }
}
