import Errand
import ErrandLogging
import Foundation
import Logging
import Testing

/// What `LoggingMonitor` writes for a request that succeeds, one that fails, and one the cache
/// answers: the levels and metadata a reader of the log relies on, and no secret.
@Suite("LoggingMonitor")
struct LoggingMonitorTests {
    struct Request: BaseRequest {
        var url: String
        var cacheTimeInSeconds = 0
        var responseSerializerType: ResponseSerializerType { .data }
    }

    let records = LogRecords()

    func makeAgent() -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        config.cacheDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-logging-tests-\(UUID().uuidString)")
        config.addEventMonitor(
            LoggingMonitor(logger: Logger(label: "api") { _ in CapturingLogHandler(records: records) }))
        return NetworkAgent(
            config: config,
            transport: StubTransport { request throws(ErrandError) in
                if request.url.path == "/unreachable" {
                    let failure = URLError(.cannotConnectToHost, userInfo: [NSURLErrorFailingURLErrorKey: request.url])
                    throw .transport(failure)
                }
                return request.url.path == "/broken"
                    ? Response(statusCode: 503) : Response(statusCode: 200, data: Data("{}".utf8))
            })
    }

    @Test func aSuccessLogsItsStartAtDebugAndItsEndAtInfoWithoutTheToken() async throws {
        let agent = makeAgent()
        _ = try await agent.response(Request(url: "/items?page=2&access_token=s3cret"))
        let lines = try await records.waitFor(count: 2)

        #expect(lines.map(\.level) == [.debug, .info])
        #expect(lines.map(\.message) == ["request started", "request finished"])
        let end = lines[1].metadata
        #expect(end["http.request.method"] == "GET")
        #expect(end["url.full"] == "https://api.example.com/items?page=2&access_token=<redacted>")
        #expect(end["http.response.status_code"] == "200")
        #expect(end["errand.attempts"] == "1")
        #expect(end["errand.duration_ms"].flatMap { Int($0) }.map { $0 >= 0 } == true)
        #expect(!lines.contains { "\($0)".contains("s3cret") })
    }

    @Test func aFailureEndsAtWarningWithItsError() async throws {
        let agent = makeAgent()
        _ = try? await agent.response(Request(url: "/broken"))
        let lines = try await records.waitFor(count: 2)

        #expect(lines[1].level == .warning)
        #expect(lines[1].message == "request failed")
        #expect(lines[1].metadata["http.response.status_code"] == "503")
        #expect(lines[1].metadata["errand.error"]?.contains("503") == true)
    }

    @Test func anErrorQuotingTheURLHasItMasked() async throws {
        let agent = makeAgent()
        _ = try? await agent.response(Request(url: "/unreachable?access_token=s3cret"))
        let lines = try await records.waitFor(count: 2)

        #expect(lines[1].metadata["errand.error"]?.contains("access_token=<redacted>") == true)
        #expect(!lines.contains { "\($0)".contains("s3cret") })
    }

    /// A command-line tool exits as soon as its last request returns: that request's end must be
    /// logged by then, not a moment later on the monitor's queue.
    @Test func aRequestsEndIsLoggedBeforeItsCallerHearsOfIt() async throws {
        let agent = makeAgent()
        _ = try await agent.response(Request(url: "/items"))
        #expect(records.all.map(\.message) == ["request started", "request finished"])
        _ = try? await agent.response(Request(url: "/broken"))
        #expect(records.all.last?.message == "request failed")
    }

    @Test func aCachedAnswerSaysSo() async throws {
        let agent = makeAgent()
        let request = Request(url: "/items", cacheTimeInSeconds: 60)
        _ = try await agent.response(request)
        _ = try await agent.response(request)
        let lines = try await records.waitFor(count: 4)

        #expect(lines[1].metadata["errand.from_cache"] == nil)
        #expect(lines[3].metadata["errand.from_cache"] == "true")
    }
}

/// One line a `CapturingLogHandler` received, its metadata as text.
struct LogRecord: Sendable, CustomStringConvertible {
    let level: Logger.Level
    let message: String
    let metadata: [String: String]

    var description: String { "\(level) \(message) \(metadata)" }
}

/// The lines logged so far, and a wait for a number of them.
final class LogRecords: @unchecked Sendable {  // `lock` guards `lines` and `waiters`.
    private let lock = NSLock()
    private var lines: [LogRecord] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<[LogRecord], Never>)] = []

    /// Every line logged so far, without waiting for more.
    var all: [LogRecord] { lock.withLock { lines } }

    func append(_ record: LogRecord) {
        let ready = lock.withLock { () -> [(CheckedContinuation<[LogRecord], Never>, [LogRecord])] in
            lines.append(record)
            let (met, waiting) = (waiters.filter { $0.count <= lines.count }, waiters.filter { $0.count > lines.count })
            waiters = waiting
            return met.map { ($0.continuation, lines) }
        }
        for (continuation, lines) in ready { continuation.resume(returning: lines) }
    }

    /// The first `count` lines once they are logged; the monitor logs on its own queue, after the
    /// request has finished. Fails after ten seconds without them.
    func waitFor(count: Int) async throws -> [LogRecord] {
        let timeout = Task { [self] in
            try await Task.sleep(for: .seconds(10))
            let waiting = lock.withLock { () -> [CheckedContinuation<[LogRecord], Never>] in
                defer { waiters.removeAll() }
                return waiters.map(\.continuation)
            }
            for continuation in waiting { continuation.resume(returning: []) }
        }
        defer { timeout.cancel() }
        let lines = await withCheckedContinuation { continuation in
            lock.withLock {
                if self.lines.count >= count {
                    continuation.resume(returning: self.lines)
                } else {
                    waiters.append((count, continuation))
                }
            }
        }
        try #require(lines.count >= count, "\(count) log lines expected")
        return Array(lines.prefix(count))
    }
}

/// A log handler keeping what it is given, at every level.
struct CapturingLogHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        records.append(LogRecord(level: event.level, message: "\(event.message)", metadata: all.mapValues { "\($0)" }))
    }
}
