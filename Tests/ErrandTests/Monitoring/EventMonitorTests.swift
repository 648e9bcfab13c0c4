import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Writes down each event as a line, and what a task showed when it finished.
final class RecordingMonitor: EventMonitor {
    private let lines = Locked<[String]>([])
    private let finishedMetrics = Locked<[TransportMetrics?]>([])
    /// Held until released: a monitor that cannot keep up. It holds its first event only: a
    /// later `start` that reached the backlog must not wait for a second release.
    private let gate: DispatchSemaphore?
    private let hasWaited = Locked(false)
    let finishesBeforeCaller: Bool

    init(blocked: Bool = false, finishesBeforeCaller: Bool = false) {
        gate = blocked ? DispatchSemaphore(value: 0) : nil
        self.finishesBeforeCaller = finishesBeforeCaller
    }

    var events: [String] { lines[\.self] }
    var metricsAtFinish: [TransportMetrics?] { finishedMetrics[\.self] }

    /// Lets a blocked monitor go on.
    func release() {
        gate?.signal()
    }

    func requestDidStart(_ task: RequestTask) {
        // The monitor's own queue, not a thread of the concurrency pool: it may wait.
        let isFirst = hasWaited.withLock { hasWaited in
            defer { hasWaited = true }
            return !hasWaited
        }
        if isFirst { gate?.wait() }
        append("start")
    }

    func request(_ task: RequestTask, willSend request: TransportRequest) {
        append("send \(request.method) \(request.url.path)")
    }

    func request(_ task: RequestTask, didReceive response: Response) {
        append("head \(response.statusCode)")
    }

    func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool) {
        append("fail \(error)\(willRetry ? ", will retry" : "")")
    }

    func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
        finishedMetrics.withLock { $0.append(task.metrics) }
        switch result {
        case .success(let response): append("finish \(response.statusCode)")
        case .failure(let error): append("finish \(error)")
        }
    }

    func request(_ task: RequestTask, didServeFromCache response: Response) {
        append("cache \(response.statusCode)")
    }

    private func append(_ line: String) {
        lines.withLock { $0.append(line) }
    }

    /// Returns once `count` requests finished.
    func waitForFinish(_ count: Int = 1) async throws {
        try await eventually { events.filter { $0.hasPrefix("finish") }.count >= count }
    }
}

private struct Get: BaseRequest {
    var url: String
    var cacheTimeInSeconds: Int = -1
}

@Suite("Event monitors")
struct EventMonitorTests {
    let fixture: PipelineFixture
    let monitor = RecordingMonitor()

    init() throws {
        fixture = try PipelineFixture()
        fixture.config.addEventMonitor(monitor)
    }

    @Test(arguments: TransportKind.allCases)
    func aRequestReportsStartSendHeadAndFinishInOrder(_ kind: TransportKind) async throws {
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent(transport: kind.make())
        _ = try await agent.response(Get(url: "/get"))
        try await monitor.waitForFinish()
        #expect(monitor.events == ["start", "send GET /get", "head 200", "finish 200"])
        // Filled before didFinish under either transport; FoundationNetworking tells no protocol.
        let metrics = try #require(monitor.metricsAtFinish.first ?? nil, "no metrics at didFinish")
        #expect(metrics.total > 0 && metrics.firstByte > 0 && metrics.firstByte <= metrics.total)
        if kind != .urlSession { #expect(metrics.httpVersion == "HTTP/1.1") }
    }

    @Test func eachAttemptOfARetriedRequestIsReported() async throws {
        defer { fixture.server.stop() }
        fixture.config.addInterceptor(RetryPolicy())
        let agent = fixture.makeAgent()
        async let finished = agent.finishedTask(FlakyApi(url: "/flaky/monitored?failures=1"))
        await fixture.timer.waitForRequests(1)
        fixture.timer.fireAll()
        #expect(await finished.responseStatusCode == 200)
        try await monitor.waitForFinish()
        #expect(
            monitor.events == [
                "start", "send GET /flaky/monitored", "head 503", "fail \(ErrandError.statusCode(503)), will retry",
                "send GET /flaky/monitored", "head 200", "finish 200",
            ])
    }

    @Test func aRejectedStatusIsTheLastFailedAttempt() async throws {
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent()
        await #expect(throws: ErrandError.statusCode(404)) { try await agent.response(Get(url: "/status/404")) }
        try await monitor.waitForFinish()
        let rejected = ErrandError.statusCode(404)
        #expect(
            monitor.events == ["start", "send GET /status/404", "head 404", "fail \(rejected)", "finish \(rejected)"])
    }

    @Test func aResponseFromTheCacheIsReportedWithoutASend() async throws {
        defer { fixture.server.stop() }
        fixture.config.cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "errand-monitor-\(UUID())")
        let agent = fixture.makeAgent()
        let cached = Get(url: "/get?monitor=\(UUID())", cacheTimeInSeconds: CacheLifetime.hour)
        _ = try await agent.response(cached)
        try await monitor.waitForFinish()
        await agent.waitForCacheWrites()
        let served = try await agent.response(cached)
        #expect(served.isDataFromCache)
        try await monitor.waitForFinish(2)
        #expect(monitor.events.suffix(3) == ["start", "cache 200", "finish 200"])
    }

    @Test func aSlowMonitorNeverHoldsUpARequest() async throws {
        defer { fixture.server.stop() }
        let slow = RecordingMonitor(blocked: true)
        defer { slow.release() }
        fixture.config.addEventMonitor(slow)
        let agent = fixture.makeAgent()
        // The monitor is stuck on its first event while the request runs to its end.
        #expect(try await agent.response(Get(url: "/get")).statusCode == 200)
        #expect(slow.events.isEmpty)
        slow.release()
        try await slow.waitForFinish()
        #expect(slow.events == ["start", "send GET /get", "head 200", "finish 200"])
    }

    /// A log's last line must be out before a tool exits: a monitor that asks for it has heard
    /// of the end before the `await` returns and before the callback runs.
    @Test func aMonitorThatFinishesBeforeTheCallerHasHeardOfTheEndByThen() async throws {
        defer { fixture.server.stop() }
        let log = RecordingMonitor(finishesBeforeCaller: true)
        fixture.config.addEventMonitor(log)
        let agent = fixture.makeAgent()
        _ = try await agent.response(Get(url: "/get"))
        #expect(log.events == ["start", "send GET /get", "head 200", "finish 200"])
        let seenByCallback = await withCheckedContinuation { continuation in
            agent.start(
                Get(url: "/status/404"), success: { _ in continuation.resume(returning: log.events.last) },
                failure: { _ in continuation.resume(returning: log.events.last) })
        }
        #expect(seenByCallback == "finish \(ErrandError.statusCode(404))")
    }

    /// Waiting for a monitor stops where dropping its events starts: one that fell 10,000
    /// events behind (here 2) holds no request up, even one the caller would wait for.
    @Test func aMonitorThatFinishesBeforeTheCallerButFellBehindHoldsNothingUp() async throws {
        defer { fixture.server.stop() }
        let config = NetworkConfig()
        config.callbackQueue = DispatchQueue(label: "errand.monitor-tests")
        let stuck = RecordingMonitor(blocked: true, finishesBeforeCaller: true)
        defer { stuck.release() }
        config.addEventMonitor(stuck, backlogLimit: 2)
        let agent = NetworkAgent(config: config, transport: StubTransport { _ in Response(statusCode: 200) })
        for path in ["/a", "/b", "/c"] {
            #expect(try await agent.response(Get(url: "https://api.example.com" + path)).statusCode == 200)
        }
        #expect(config.droppedMonitorEventCount >= 8)
    }

    @Test func eventsAMonitorCannotKeepUpWithAreDroppedAndCounted() async throws {
        defer { fixture.server.stop() }
        let config = NetworkConfig()
        config.callbackQueue = DispatchQueue(label: "errand.monitor-tests")
        let slow = RecordingMonitor(blocked: true)
        defer { slow.release() }
        config.addEventMonitor(slow, backlogLimit: 2)
        let agent = NetworkAgent(config: config, transport: StubTransport { _ in Response(statusCode: 200) })
        let paths = ["/a", "/b", "/c"]
        for path in paths { _ = try await agent.response(Get(url: "https://api.example.com" + path)) }
        // The backlog holds two events: the monitor's queue took none yet (10 dropped), or is
        // stuck on a first batch of one or two with two more behind it (9 or 8 dropped).
        let dropped = config.droppedMonitorEventCount
        #expect((8...10).contains(dropped))
        slow.release()
        let all = paths.flatMap { ["start", "send GET \($0)", "head 200", "finish 200"] }
        try await eventually { slow.events.count == all.count - dropped }
        // What arrives arrives in order: a subsequence of every event, starting with the first.
        #expect(slow.events.first == "start")
        var rest = all[...]
        for event in slow.events {
            guard let found = rest.firstIndex(of: event) else {
                Issue.record("\(slow.events) is not in the order of \(all)")
                break
            }
            rest = rest[(found + 1)...]
        }
    }

    @Test func monitorsAreReadWhenARequestStarts() async throws {
        defer { fixture.server.stop() }
        let agent = fixture.makeAgent()
        let later = RecordingMonitor()
        async let finished = agent.finishedTask(FlakyApi(url: "/delay/0.2"))
        try await eventually { !monitor.events.isEmpty }
        fixture.config.clearEventMonitors()
        fixture.config.addEventMonitor(later)
        _ = await finished
        try await monitor.waitForFinish()
        #expect(monitor.events.last == "finish 200")
        #expect(later.events.isEmpty)
        #expect(fixture.config.eventMonitors.count == 1)
    }

    @Test func theDebugLogIsAMonitorThatWritesOneLinePerRequest() async throws {
        defer { fixture.server.stop() }
        let lines = Locked<[String]>([])
        fixture.config.addEventMonitor(DebugLogMonitor(write: { line in lines.withLock { $0.append(line) } }))
        _ = try await fixture.makeAgent().response(Get(url: "/get?token=s3cret"))
        try await eventually { lines[\.self].count == 1 }
        let line = try #require(lines[\.self].first)
        #expect(line.hasPrefix("[Errand] GET ") && line.contains("→ 200") && !line.contains("s3cret"))
        #expect(fixture.config.monitorsForNewRequest().isEmpty == false)
        let quiet = NetworkConfig()
        #expect(quiet.monitorsForNewRequest().isEmpty)
        quiet.debugLogEnabled = true
        #expect(!quiet.monitorsForNewRequest().isEmpty)
    }
}

/// A drainable monitor that drains its own channels while its queue delivers to it: what a
/// recorder asked for its archive from its own queue would do.
private final class SelfDrainingMonitor: DrainableMonitor {
    private let channels = Locked<[WeakChannel]>([])
    let finished = Locked(0)

    func attach(_ channel: EventMonitorChannel) {
        channels.withLock { $0.append(WeakChannel(channel: channel)) }
    }

    func willSendEvent(_ task: RequestTask, _ request: TransportRequest) -> EventMonitorChannel.Event {
        { $0.request(task, willSend: request) }
    }

    func didReceiveEvent(_ task: RequestTask, _ response: Response) -> EventMonitorChannel.Event {
        { $0.request(task, didReceive: response) }
    }

    func didFinishEvent(_ task: RequestTask, _ result: Result<Response, ErrandError>) -> EventMonitorChannel.Event {
        { [self] _ in
            for channel in channels[\.self].compactMap(\.channel) { channel.deliverPosted() }
            finished.withLock { $0 += 1 }
        }
    }
}

@Suite("Draining a monitor's events")
struct DrainableMonitorTests {
    @Test func drainingFromTheMonitorsOwnQueueDoesNotWait() async throws {
        let fixture = try PipelineFixture()
        defer { fixture.server.stop() }
        let monitor = SelfDrainingMonitor()
        fixture.config.addEventMonitor(monitor)
        let agent = fixture.makeAgent()
        for _ in 1...3 { _ = try await agent.response(Get(url: "/get")) }
        try await eventually(within: 3) { monitor.finished[\.self] == 3 }
    }
}
