import Errand
import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

/// An in-memory GET that reports its body's progress.
struct ProgressRequest: BaseRequest {
    var url: String
    var downloadProgress: (@Sendable (TransferProgress) -> Void)?
    var responseSerializerType: ResponseSerializerType { .data }
}

/// A download to a file watched by both progress closures.
struct WatchedDownload: BaseRequest {
    var url: String
    var resumableDownloadPath: String?
    var downloadProgress: (@Sendable (TransferProgress) -> Void)?
    var resumableDownloadProgress: (@Sendable (TransferProgress) -> Void)?
}

/// A screen that shows a request's progress, as a view controller would.
@MainActor
final class ProgressDelegate: RequestDelegate {
    var downloaded: [TransferProgress] = []
    var uploaded: [TransferProgress] = []
    private var waiter: CheckedContinuation<RequestTask, Never>?

    func request(_ task: RequestTask, didUpdateDownloadProgress progress: TransferProgress) {
        downloaded.append(progress)
    }

    func request(_ task: RequestTask, didUpdateUploadProgress progress: TransferProgress) {
        uploaded.append(progress)
    }

    func requestFinished(_ task: RequestTask) { finish(task) }
    func requestFailed(_ task: RequestTask) { finish(task) }

    func finished() async -> RequestTask {
        await withCheckedContinuation { waiter = $0 }
    }

    private func finish(_ task: RequestTask) {
        waiter?.resume(returning: task)
        waiter = nil
    }
}

/// Progress of ordinary in-memory responses, not only downloads to a file.
@Suite("Response progress")
struct ResponseProgressTests {
    static let size = 4 << 20

    static func expectReachesTotal(_ values: [TransferProgress], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            values.last == TransferProgress(completedBytes: Int64(size), totalBytes: Int64(size)),
            sourceLocation: sourceLocation)
        #expect(
            zip(values, values.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes },
            "never backwards: \(values.map(\.completedBytes))", sourceLocation: sourceLocation)
        #expect(
            values.allSatisfy { $0.totalBytes == Int64(size) }, "the total is the declared length",
            sourceLocation: sourceLocation)
    }

    @Test func theClosureFollowsAnInMemoryBodyToItsTotal() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let log = ProgressLog()
        let request = ProgressRequest(url: "/download/\(Self.size)", downloadProgress: { log.append($0) })

        // Closures share the serial callback queue: every queued progress call runs before success.
        let task = await fixture.makeAgent().finishedTask(request)
        #expect(task.error == nil)
        #expect(task.responseData?.count == Self.size)
        // Calls are coalesced: a callback queue slower than the transfer may be handed only the
        // newest value, the end. That the first value is delivered too, ProgressDeliveryTests
        // shows with a transport driven by hand.
        #expect(!log.values.isEmpty)
        Self.expectReachesTotal(log.values)
    }

    @Test func theStreamFollowsAnInMemoryBodyAndEndsWithTheTask() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let task = fixture.makeAgent().start(ProgressRequest(url: "/download/\(Self.size)"))
        var values: [TransferProgress] = []
        for await progress in task.downloadProgress {
            values.append(progress)
        }
        let response = try await task.value
        #expect(response.data.count == Self.size)
        Self.expectReachesTotal(values)

        // Asked for after the end: the final value, then the end.
        var late: [TransferProgress] = []
        for await progress in task.downloadProgress {
            late.append(progress)
        }
        #expect(late == [TransferProgress(completedBytes: Int64(Self.size), totalBytes: Int64(Self.size))])
    }

    @Test func aDownloadToAFileTellsBothClosuresOfTheBytesOnDisk() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let (general, downloads) = (ProgressLog(), ProgressLog())
        let request = WatchedDownload(
            url: "/download/\(Self.size)", resumableDownloadPath: fixture.path("file.bin"),
            downloadProgress: { general.append($0) }, resumableDownloadProgress: { downloads.append($0) })
        let task = await fixture.makeAgent().finishedTask(request)
        #expect(task.error == nil)
        Self.expectReachesTotal(general.values)
        Self.expectReachesTotal(downloads.values)
    }

    @Test func anEncodedBodyEndsWithItsDecodedSizeAsTheTotal() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let log = ProgressLog()
        let task = await fixture.makeAgent().finishedTask(
            ProgressRequest(url: "/gzip", downloadProgress: { log.append($0) }))
        let size = try #require(task.responseData?.count)
        #expect(task.error == nil)
        // Content-Length counts the encoded bytes, so the total is unknown until the end.
        #expect(log.values.dropLast().allSatisfy { $0.totalBytes == nil })
        #expect(log.values.last == TransferProgress(completedBytes: Int64(size), totalBytes: Int64(size)))
        #expect(log.isMonotonic)
    }
}

@Suite("Response progress: delegate")
@MainActor
struct ResponseProgressDelegateTests {
    @Test func theDelegateIsToldOfProgressOnTheMainActor() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let delegate = ProgressDelegate()
        fixture.makeAgent().start(ProgressRequest(url: "/download/\(ResponseProgressTests.size)"), delegate: delegate)
        let task = await delegate.finished()
        #expect(task.error == nil)
        // Progress calls are queued on main before the finishing call.
        ResponseProgressTests.expectReachesTotal(delegate.downloaded)
        #expect(delegate.uploaded.isEmpty)
    }

    @Test func theDelegateIsToldOfUploadProgress() async throws {
        // Driven by hand: URLSession on Linux does not always report a small body's upload.
        let transport = ManualTransport()
        let delegate = ProgressDelegate()
        let body = Data(repeating: 7, count: 1024)
        let agent = NetworkAgent.testing(transport)
        agent.start(UploadRequest(url: "/upload", uploadBody: .data(body)), delegate: delegate)
        let sent = try #require(transport.sent.first)
        sent.events(.uploadProgress(bytesSent: 512, totalBytes: 1024))
        sent.events(.uploadProgress(bytesSent: 1024, totalBytes: 1024))
        sent.respond(body: "{}")
        let task = await delegate.finished()
        #expect(task.error == nil)
        #expect(delegate.uploaded.last == TransferProgress(completedBytes: 1024, totalBytes: 1024))
        #expect(delegate.downloaded.last == TransferProgress(completedBytes: 2, totalBytes: 2))
    }

    @Test func theDelegateIsToldTheFirstValueOfEachDirection() async throws {
        let transport = ManualTransport()
        let delegate = ProgressDelegate()
        NetworkAgent.testing(transport).start(
            UploadRequest(url: "/upload", uploadBody: .data(Data(count: 3000))), delegate: delegate)
        let sent = try #require(await transport.sent(count: 1)?.first)
        let mainQueueRan = { await withCheckedContinuation { done in DispatchQueue.main.async { done.resume() } } }
        sent.events(.uploadProgress(bytesSent: 1000, totalBytes: 3000))
        await mainQueueRan()
        #expect(delegate.uploaded == [TransferProgress(completedBytes: 1000, totalBytes: 3000)])
        sent.events(.responseHead(statusCode: 200, headers: ["Content-Length": "2"]))
        await mainQueueRan()
        #expect(delegate.downloaded == [TransferProgress(completedBytes: 0, totalBytes: 2)])
        sent.events(.body(Data("{}".utf8)))
        sent.events(.completed(nil))
        #expect(await delegate.finished().error == nil)
    }
}
