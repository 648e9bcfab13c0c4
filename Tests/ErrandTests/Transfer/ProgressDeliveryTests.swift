import Errand
import ErrandScenarios
import Foundation
import Testing

/// Every progress value reaches a closure: the first one too, and the only one of a body sent in
/// one piece. The transport is driven by hand, so each value is known and waited for.
@Suite("Progress: every value reaches the closures")
struct ProgressDeliveryTests {
    let transport = ManualTransport()
    let agent: NetworkAgent

    init() {
        agent = .testing(transport)
    }

    private func firstSent() async throws -> ManualTransport.Sent {
        try #require(await transport.sent(count: 1)?.first)
    }

    private func delivered() async {
        await TransferFixture.callbacksDelivered(on: agent)
    }

    @Test func theFirstUploadValueReachesTheClosure() async throws {
        let log = ProgressLog()
        let task = agent.start(
            UploadRequest(url: "/upload", uploadBody: .data(Data(count: 3000)), uploadProgress: { log.append($0) }))
        let sent = try await firstSent()
        sent.events(.uploadProgress(bytesSent: 1000, totalBytes: 3000))
        await delivered()
        #expect(log.values == [TransferProgress(completedBytes: 1000, totalBytes: 3000)])
        sent.events(.uploadProgress(bytesSent: 3000, totalBytes: 3000))
        sent.respond()
        _ = try await task.value
        await delivered()
        #expect(log.values.last == TransferProgress(completedBytes: 3000, totalBytes: 3000))
    }

    @Test func aBodySentInOnePieceReportsItsOneValue() async throws {
        let log = ProgressLog()
        let task = agent.start(
            UploadRequest(url: "/upload", uploadBody: .data(Data(count: 57_000)), uploadProgress: { log.append($0) }))
        let sent = try await firstSent()
        sent.events(.uploadProgress(bytesSent: 57_000, totalBytes: 57_000))
        sent.respond()
        _ = try await task.value
        await delivered()
        #expect(log.values == [TransferProgress(completedBytes: 57_000, totalBytes: 57_000)])
    }

    /// Answers with a 10-byte body, checking that the zero at the head and the end are reported.
    private func expectTenBytesFromZero(
        _ task: RequestTask, log: ProgressLog, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let sent = try await firstSent()
        sent.events(.responseHead(statusCode: 200, headers: ["Content-Length": "10"]))
        await delivered()
        #expect(log.values == [TransferProgress(completedBytes: 0, totalBytes: 10)], sourceLocation: sourceLocation)
        sent.events(.body(Data(count: 10)))
        sent.events(.completed(nil))
        _ = try await task.value
        await delivered()
        #expect(log.values.last == TransferProgress(completedBytes: 10, totalBytes: 10), sourceLocation: sourceLocation)
    }

    @Test func anInMemoryBodyStartsFromZero() async throws {
        let log = ProgressLog()
        let task = agent.start(ProgressRequest(url: "/bytes", downloadProgress: { log.append($0) }))
        try await expectTenBytesFromZero(task, log: log)
    }

    @Test func aDownloadToAFileReportsItsFirstBytesOnDisk() async throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-progress-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let log = ProgressLog()
        let task = agent.start(
            DownloadRequest(
                url: "/file.bin", resumableDownloadPath: directory.appendingPathComponent("file.bin").path,
                resumableDownloadProgress: { log.append($0) }))
        try await expectTenBytesFromZero(task, log: log)
    }
}

/// The same over HTTP to the loopback server, under the transport the suite runs with.
@Suite("Progress: uploads over HTTP")
struct UploadProgressOverHTTPTests {
    @Test(arguments: [57_000, 300_000])
    func theUploadClosureEndsAtTheBodysSize(size: Int) async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let log = ProgressLog()
        let agent = fixture.makeAgent()
        let request = UploadRequest(
            url: "/upload", method: .put, uploadBody: .data(Data(count: size)), uploadProgress: { log.append($0) })
        // No stream is asked for: the closure is the only listener, as in most apps.
        _ = try await agent.start(request).value
        await TransferFixture.callbacksDelivered(on: agent)
        #expect(log.values.last == TransferProgress(completedBytes: Int64(size), totalBytes: Int64(size)))
        #expect(log.isMonotonic)
    }
}
