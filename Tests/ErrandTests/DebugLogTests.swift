import ErrandScenarios
import Foundation
import Testing

@testable import Errand

@Suite("Debug log lines: one per request, with the bytes received")
struct DebugLogTests {
    struct Page: BaseRequest {
        var url: String { "/page" }
    }

    struct Download: BaseRequest {
        let path: String
        var url: String { "/file.bin" }
        var resumableDownloadPath: String? { path }
    }

    @Test func aDownloadReportsTheBytesOfItsFile() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-debuglog-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        let task = agent.start(Download(path: directory.appendingPathComponent("file.bin").path))
        let sent = try #require(await transport.sent(count: 1))
        sent[0].respond(
            status: 200, headers: ["Content-Length": "100000"], body: String(repeating: "x", count: 100_000))
        let response = try await task.value
        #expect(response.fileURL != nil)
        #expect(response.data.isEmpty)
        let line = DebugLog.line(for: task)
        #expect(line.hasSuffix(" ms, 100000 bytes"), "\(line)")
    }

    @Test func aStreamReportsTheBytesItsConsumerWasHanded() async throws {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        async let opened = agent.stream(Page())
        let sent = try #require(await transport.sent(count: 1))[0]
        sent.events(.responseHead(statusCode: 200, headers: ["Content-Type": "text/event-stream"]))
        let stream = try await opened
        for _ in 0..<22 { sent.events(.body(Data("data: tick\n\n".utf8))) }
        sent.events(.completed(nil))
        var events = 0
        for try await _ in stream.events { events += 1 }
        #expect(events == 22)
        _ = try await stream.task.value
        let line = DebugLog.line(for: stream.task)
        #expect(line.hasSuffix(" ms, \(22 * 12) bytes"), "\(line)")
    }

    @Test func aTimeoutWaitingForAConnectionNamesTheLimit() async throws {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        let waited = agent.start(Page())
        var metrics = TransportMetrics()
        metrics.exhaustedConnectionLimit = 6
        let sent = try #require(await transport.sent(count: 1))[0]
        sent.events(.metrics(metrics))
        sent.events(.completed(.timedOut))
        _ = try? await waited.value
        let line = DebugLog.line(for: waited)
        #expect(line.contains("never sent"), "\(line)")
        #expect(line.contains("6 connections, ConnectionOptions.maximumConnectionsPerHost"), "\(line)")

        let silent = agent.start(Page())
        try #require(await transport.sent(count: 2))[1].events(.completed(.timedOut))
        _ = try? await silent.value
        #expect(!DebugLog.line(for: silent).contains("never sent"))
    }

    @Test func anErrorQuotingAMultiLineBodyStaysOnOneLine() async throws {
        let transport = ManualTransport()
        let agent = NetworkAgent.testing(transport)
        let task = agent.start(Page())
        let sent = try #require(await transport.sent(count: 1))
        sent[0].respond(status: 200, body: "<p>\nDown\r\nfor now</p>")
        _ = try? await task.value
        guard case .serialization(let reason) = task.error else {
            Issue.record("expected a serialization error, got \(String(describing: task.error))")
            return
        }
        let quotedLines = reason.split(whereSeparator: \.isNewline).count
        #expect(quotedLines > 1, "the error itself quotes the body as it is")
        let line = DebugLog.line(for: task)
        #expect(line.split(whereSeparator: \.isNewline).count == 1, "\(line)")
        #expect(line.contains("failed: Serialization failed: the body of http://example.invalid/page is not JSON"))
        #expect(line.contains("<p> Down for now</p>"), "\(line)")
    }
}
