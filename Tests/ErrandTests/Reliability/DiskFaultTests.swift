import Errand
import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

/// A full disk and read-only folders, on small file systems of their own (``SmallDisk``): the
/// response that arrived is still delivered, the failure is a `.fileSystem` error naming the
/// path, no torn cache entry is left, and a partial download survives to resume.
@Suite("Disk faults: full and read-only", .enabled(if: SmallDisk.canMount, "needs to mount a tmpfs (root)"))
struct DiskFaultTests {
    private func expectFileSystemError(_ error: ErrandError?, naming path: String) {
        guard case .fileSystem(let reason) = error else {
            Issue.record("expected a file system error, got \(String(describing: error))")
            return
        }
        #expect(reason.contains(path), "\(reason)")
    }

    private func saveCacheError(_ agent: NetworkAgent) -> ErrandError? {
        do {
            try agent.saveCacheSync(Response(statusCode: 200, data: Data(count: 64 << 10)), for: CachedRequest())
            return nil
        } catch {
            return error
        }
    }

    @Test func aFullDiskStillDeliversTheResponseAndLeavesNoTornEntry() async throws {
        let disk = try await SmallDisk.mount(kibibytes: 256)
        let cache = disk.root.appendingPathComponent("cache")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        try disk.fill()
        let body = Data(repeating: UInt8(ascii: "x"), count: 64 << 10)
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200, data: body) })
        agent.config.cacheDirectory = cache

        let task = await agent.finishedTask(CachedRequest(responseSerializerType: .data))
        #expect(task.error == nil)
        #expect(task.responseData == body)
        await agent.waitForCacheWrites()
        expectFileSystemError(saveCacheError(agent), naming: cache.path)
        #expect(disk.files(under: cache).isEmpty, "no entry and no temporary file is left")
        // The memory layer may still serve it in this process; after a restart there is no entry.
        let restarted = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 500) })
        restarted.config.cacheDirectory = cache
        #expect(restarted.cacheMissReason(CachedRequest(responseSerializerType: .data)) == .missing)
    }

    @Test func aReadOnlyCacheFolderStillDeliversTheResponse() async throws {
        let disk = try await SmallDisk.mount(kibibytes: 64, readOnly: true)
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200, data: Data("{}".utf8)) })
        agent.config.cacheDirectory = disk.root.appendingPathComponent("cache")

        let task = await agent.finishedTask(CachedRequest())
        #expect(task.error == nil)
        #expect(task.responseStatusCode == 200)
        await agent.waitForCacheWrites()
        expectFileSystemError(saveCacheError(agent), naming: disk.root.path)
    }

    @Test func anHTTPCachesRevalidationOnAFullDiskStillAnswersAndKeepsTheEntryWhole() async throws {
        let disk = try await SmallDisk.mount(kibibytes: 256)
        let cache = disk.root.appendingPathComponent("cache")
        let body = Data(repeating: UInt8(ascii: "x"), count: 16 << 10)
        let fields = ["Cache-Control": "max-age=10", "ETag": #""v1""#, "Vary": "Accept-Language"]
        let agent = NetworkAgent.testing(
            StubTransport { request in
                request.headers["If-None-Match"] == nil
                    ? Response(statusCode: 200, headers: fields, data: body)
                    : Response(statusCode: 304, headers: ["Cache-Control": "max-age=600", "ETag": #""v1""#])
            })
        let clock = TestClock()
        agent.config.cacheDirectory = cache
        agent.config.cacheClock = { clock.now }
        var request = HTTPCachedRequest(url: "/item", headers: ["Accept-Language": "en"])
        request.responseSerializerType = .data
        _ = await agent.finishedTask(request)
        await agent.waitForCacheWrites()
        try disk.fill()
        clock.advance(by: 20)

        let revalidated = await agent.finishedTask(request)
        #expect(revalidated.error == nil)
        #expect(revalidated.response?.isRevalidated == true)
        #expect(revalidated.responseData == body)
        await agent.waitForCacheWrites()
        // The refreshed entry could not be written: the one before it is still whole on disk.
        let restarted = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 500) })
        restarted.config.cacheDirectory = cache
        let entry = try restarted.loadCache(request, allowingExpired: true)
        #expect(entry.data == body)
        #expect(entry.value(forHeader: "Cache-Control") == "max-age=10")
    }

    @Test func aReadOnlyDownloadFolderFailsWithAFileSystemError() async throws {
        let disk = try await SmallDisk.mount(kibibytes: 64, readOnly: true)
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200, data: Data("abc".utf8)) })
        let target = disk.root.appendingPathComponent("file.bin").path
        let task = await agent.finishedTask(DownloadRequest(url: "/file.bin", resumableDownloadPath: target))
        expectFileSystemError(task.error, naming: target)
    }

    @Test func aDownloadThatFillsTheDiskKeepsItsPartialAndResumesOnceThereIsRoom() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let disk = try await SmallDisk.mount(kibibytes: 1024)
        let size = 768 << 10
        try disk.fill(leaving: 256 << 10)
        let target = disk.root.appendingPathComponent("file.bin").path
        let agent = fixture.makeAgent()
        let request = DownloadRequest(url: "/download/\(size)", resumableDownloadPath: target)

        let failed = await agent.finishedTask(request)
        expectFileSystemError(failed.error, naming: target)
        let kept = TransferFixture.fileSize(target + ".errand-partial") ?? 0
        #expect(kept > 0, "the bytes that fitted are kept")
        #expect(!FileManager.default.fileExists(atPath: target))

        try disk.makeRoom()
        let resumed = await agent.finishedTask(request)
        #expect(resumed.error == nil)
        #expect(TransferFixture.fileSize(target) == size)
        #expect(try await TransferFixture.file(target, matchesDownloadOf: size, version: 1))
        let ranges = fixture.server.receivedRequests(path: "/download").map { $0.header("Range") }
        #expect(ranges.count == 2 && ranges.last == "bytes=\(kept)-", "\(ranges)")
    }
}
