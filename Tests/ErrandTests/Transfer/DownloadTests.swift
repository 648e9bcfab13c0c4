import Errand
import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

/// Resumable downloads over HTTP to the loopback server's `/download`, which can drop the
/// connection, ignore ranges and change its content between attempts.
@Suite("Resumable downloads")
struct DownloadTests {
    @Test func aDownloadInterruptedThreeTimesResumesToAByteIdenticalFile() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let size = 32 << 20
        let target = fixture.path("big.bin")
        let progress = ProgressLog()
        let request = DownloadRequest(
            url: "/download/\(size)?drop_after=\(10 << 20)", resumableDownloadPath: target,
            resumableDownloadProgress: { progress.append($0) })
        let agent = fixture.makeAgent()

        for attempt in 1...3 {
            let task = await agent.finishedTask(request)
            #expect(task.error?.isTransport == true, "attempt \(attempt): \(String(describing: task.error))")
            #expect(!FileManager.default.fileExists(atPath: target))
            #expect(TransferFixture.fileSize(target + ".errand-partial") == attempt * (10 << 20))
        }
        let done = await agent.finishedTask(request)
        #expect(done.error == nil)
        #expect(done.response?.fileURL?.path == target)
        #expect(done.responseData?.isEmpty == true, "the body went to disk, not memory")
        #expect(TransferFixture.fileSize(target) == size)
        #expect(try await TransferFixture.file(target, matchesDownloadOf: size, version: 1))
        #expect(!FileManager.default.fileExists(atPath: target + ".errand-partial"))
        #expect(!FileManager.default.fileExists(atPath: target + ".errand-partial.json"))

        let ranges = fixture.server.receivedRequests(path: "/download").map { $0.header("Range") }
        #expect(ranges == [nil, "bytes=\(10 << 20)-", "bytes=\(20 << 20)-", "bytes=\(30 << 20)-"])
        // Each attempt's progress grows, and a resumed attempt starts where the last one stopped.
        let values = progress.values
        #expect(values.last == TransferProgress(completedBytes: Int64(size), totalBytes: Int64(size)))
        #expect(values.allSatisfy { $0.totalBytes == Int64(size) })
    }

    @Test func aDownloadLargerThanTheMemoryLimitIsNotLimitedByIt() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        agent.config.maximumResponseSize = 1 << 20
        let target = fixture.path("large.bin")
        // Its declared length, 4 MiB, is over the limit; the body goes to disk, not memory.
        let task = await agent.finishedTask(DownloadRequest(url: "/download/\(4 << 20)", resumableDownloadPath: target))
        #expect(task.error == nil)
        #expect(TransferFixture.fileSize(target) == 4 << 20)
        // An error's body stays in memory, and the limit applies to it.
        let refused = await agent.finishedTask(
            DownloadRequest(url: "/status/404", resumableDownloadPath: fixture.path("missing.bin")))
        #expect(refused.error == .statusCode(404))
    }

    @Test func aNewAgentResumesWhatAnotherLeft() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let size = 3 << 20
        let target = fixture.path("file.bin")
        let first = await fixture.makeAgent().finishedTask(
            DownloadRequest(url: "/download/\(size)?drop_after=\(1 << 20)", resumableDownloadPath: target))
        #expect(first.error != nil)

        let progress = ProgressLog()
        let restarted = fixture.makeAgent()
        let task = restarted.start(
            DownloadRequest(
                url: "/download/\(size)?drop_after=\(1 << 20)", resumableDownloadPath: target,
                resumableDownloadProgress: { progress.append($0) }))
        let stream = task.downloadProgress
        _ = try? await task.value
        var streamed: [TransferProgress] = []
        for await value in stream { streamed.append(value) }
        #expect(task.error != nil, "drops again after another MiB")
        #expect(TransferFixture.fileSize(target + ".errand-partial") == 2 << 20)
        // Resumed progress counts from the bytes already on disk, never from zero.
        #expect(!progress.values.isEmpty)
        #expect(progress.values.allSatisfy { $0.completedBytes >= 1 << 20 })
        #expect(progress.isMonotonic)
        #expect(streamed.last?.completedBytes == 2 << 20)
        #expect(zip(streamed, streamed.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })

        let done = await fixture.makeAgent().finishedTask(
            DownloadRequest(url: "/download/\(size)?drop_after=\(1 << 20)", resumableDownloadPath: target))
        #expect(done.error == nil)
        #expect(try await TransferFixture.file(target, matchesDownloadOf: size, version: 1))
    }

    @Test func aChangedResourceRestartsCleanlyNeverSplicing() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let size = 2 << 20
        let target = fixture.path("changing.bin")
        let agent = fixture.makeAgent()
        let request = DownloadRequest(url: "/download/\(size)?drop_after=\(1 << 20)", resumableDownloadPath: target)
        #expect(await agent.finishedTask(request).error != nil)

        fixture.server.downloadVersion = 2
        let done = await agent.finishedTask(
            DownloadRequest(url: "/download/\(size)?drop_after=\(1 << 20)", resumableDownloadPath: target))
        // If-Range no longer matches, so the server sends the new version whole — and drops it again.
        #expect(done.error != nil)
        #expect(TransferFixture.fileSize(target + ".errand-partial") == 1 << 20)
        let partial = try Data(contentsOf: URL(fileURLWithPath: target + ".errand-partial"))
        #expect(partial == TestServer.downloadContent(size: size, version: 2, range: 0..<(1 << 20)))

        #expect(await agent.finishedTask(request).error == nil)
        #expect(try await TransferFixture.file(target, matchesDownloadOf: size, version: 2))
    }

    @Test func aServerIgnoringRangeRestartsFromZero() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let size = 1 << 20
        let target = fixture.path("norange.bin")
        let agent = fixture.makeAgent()
        #expect(
            await agent.finishedTask(
                DownloadRequest(url: "/download/\(size)?drop_after=300000", resumableDownloadPath: target)
            ).error != nil)
        let done = await agent.finishedTask(
            DownloadRequest(url: "/download/\(size)?drop_after=300000&ignore_range=1", resumableDownloadPath: target))
        #expect(done.error != nil, "the URL differs, so nothing is resumed; it drops again")
        let whole = await agent.finishedTask(
            DownloadRequest(url: "/download/\(size)?ignore_range=1", resumableDownloadPath: target))
        #expect(whole.error == nil)
        #expect(try await TransferFixture.file(target, matchesDownloadOf: size, version: 1))
    }

    @Test func anIgnoredRangeOnTheSameURLTruncatesThePartial() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let size = 2 << 20
        let target = fixture.path("ignored.bin")
        let agent = fixture.makeAgent()
        // The first attempt is cancelled part way, leaving a partial.
        let trigger = CancelTrigger(atBytes: 100_000)
        var request = DownloadRequest(
            url: "/download/\(size)?rate=2000000&ignore_range=1", resumableDownloadPath: target)
        request.resumableDownloadProgress = { trigger.observe($0) }
        let task = agent.start(request)
        trigger.task = task
        _ = try? await task.value
        #expect(task.error == .cancelled)
        #expect((TransferFixture.fileSize(target + ".errand-partial") ?? 0) > 0)

        request.resumableDownloadProgress = nil
        let done = await agent.finishedTask(request)
        #expect(done.error == nil)
        #expect(fixture.server.receivedRequests(path: "/download").last?.header("Range") != nil, "it asked to resume")
        #expect(try await TransferFixture.file(target, matchesDownloadOf: size, version: 1))
    }

    @Test func cancellingKeepsThePartialAndTheNextStartResumes() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let size = 2 << 20
        let target = fixture.path("cancelled.bin")
        let trigger = CancelTrigger(atBytes: 200_000)
        // Throttled to take two seconds, so that the cancel lands mid-body however busy the machine.
        var request = DownloadRequest(url: "/download/\(size)?rate=1000000", resumableDownloadPath: target)
        request.resumableDownloadProgress = { trigger.observe($0) }
        let agent = fixture.makeAgent()
        let task = agent.start(request)
        trigger.task = task
        _ = try? await task.value
        #expect(task.error == .cancelled)
        let kept = try #require(TransferFixture.fileSize(target + ".errand-partial"))
        #expect(kept >= 200_000)
        request.resumableDownloadProgress = nil
        let done = await agent.finishedTask(request)
        #expect(done.error == nil)
        // A cancel that lands after the last byte keeps every byte; the next start then asks for
        // the last one again, to prove the file unchanged (see PartialDownloadTests).
        let resumedFrom = kept < size ? kept : size - 1
        #expect(fixture.server.receivedRequests(path: "/download").last?.header("Range") == "bytes=\(resumedFrom)-")
        #expect(try await TransferFixture.file(target, matchesDownloadOf: size, version: 1))
    }

    @Test func anErrorResponseLeavesNoFileAndKeepsItsBody() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let target = fixture.path("missing.bin")
        let task = await fixture.makeAgent().finishedTask(
            DownloadRequest(url: "/status/404", resumableDownloadPath: target))
        #expect(task.error == .statusCode(404))
        #expect(task.responseStatusCode == 404)
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(!FileManager.default.fileExists(atPath: target + ".errand-partial"))

        let range = await fixture.makeAgent().finishedTask(
            DownloadRequest(url: "/range/0", resumableDownloadPath: target))
        #expect(range.error == .statusCode(404))
        #expect(range.responseString == "number of bytes must be in the range (0, 102400]")
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test func aDirectoryTargetGetsTheURLsLastComponentAndAnOldFileIsReplacedOnlyOnSuccess() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let done = await agent.finishedTask(
            DownloadRequest(url: "/download/5000", resumableDownloadPath: fixture.directory.path))
        #expect(done.error == nil)
        let file = fixture.directory.appendingPathComponent("5000")
        #expect(done.response?.fileURL?.standardizedFileURL == file.standardizedFileURL)
        #expect(try Data(contentsOf: file) == TestServer.downloadContent(size: 5000, version: 1, range: 0..<5000))

        fixture.server.downloadVersion = 2
        let failed = await agent.finishedTask(
            DownloadRequest(url: "/download/5000?drop_after=100", resumableDownloadPath: file.path))
        #expect(failed.error != nil)
        #expect(try Data(contentsOf: file) == TestServer.downloadContent(size: 5000, version: 1, range: 0..<5000))
        #expect(
            await agent.finishedTask(DownloadRequest(url: "/download/5000", resumableDownloadPath: file.path)).error
                == nil)
        #expect(try Data(contentsOf: file) == TestServer.downloadContent(size: 5000, version: 2, range: 0..<5000))
    }

    @Test func theResourceDeadlineEndsASlowDownloadAndKeepsThePartial() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let target = fixture.path("slow.bin")
        // Half a minute of body at 1 MB/s: a suite run under URLSession once saw the 5 s deadline
        // fire after eight seconds of body had all arrived.
        var request = DownloadRequest(url: "/download/\(32 << 20)?rate=1000000", resumableDownloadPath: target)
        request.timeoutIntervalForResource = 5
        let task = await fixture.makeAgent().finishedTask(request)
        #expect(task.error == .timedOut)
        #expect((TransferFixture.fileSize(target + ".errand-partial") ?? 0) > 0)
    }

    @Test func twoDownloadsIntoOneFileAreRefused() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let target = fixture.path("one.bin")
        let agent = fixture.makeAgent()
        let slow = agent.start(DownloadRequest(url: "/download/1000000?rate=1000000", resumableDownloadPath: target))
        let second = await agent.finishedTask(DownloadRequest(url: "/download/1000000", resumableDownloadPath: target))
        guard case .fileSystem(let reason) = second.error else {
            Issue.record("expected a refusal, got \(String(describing: second.error))")
            return
        }
        #expect(reason.contains("another download"))
        slow.cancel()
    }
}
