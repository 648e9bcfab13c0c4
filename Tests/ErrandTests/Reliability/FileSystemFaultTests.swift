import Errand
import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@Suite("File-system faults")
struct FileSystemFaultTests {
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("errand-fs-faults-\(UUID())")

    init() throws {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    /// A regular file where a folder should be.
    func fileInTheWay(_ name: String) throws -> URL {
        let file = scratch.appendingPathComponent(name)
        try Data("not a folder".utf8).write(to: file)
        return file
    }

    @Test func aCacheFolderThatIsAFileStillDeliversTheResponseAndSaveCacheSaysWhy() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200, data: Data("{}".utf8)) })
        agent.config.cacheDirectory = try fileInTheWay("cache")
        let task = await agent.finishedTask(CachedRequest())
        #expect(task.error == nil)
        #expect(task.responseStatusCode == 200)
        await agent.waitForCacheWrites()
        #expect(throws: ErrandError.self) {
            try agent.saveCacheSync(Response(statusCode: 200, data: Data("{}".utf8)), for: CachedRequest())
        }
        do {
            try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: CachedRequest())
        } catch {
            guard case .fileSystem(let reason) = error else {
                Issue.record("expected a file system error, got \(error)")
                return
            }
            #expect(reason.contains(agent.config.cacheDirectory.path))
        }
    }

    @Test(.disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
    func saveCacheIsOnDiskWhenItReturns() async throws {
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent(transport: StubTransport { _ in Response(statusCode: 500) })
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: CachedRequest())
        #expect(fixture.entryFiles().count == 1)
    }

    @Test func aDownloadUnderAFileFailsWithAFileSystemError() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let blocker = try fileInTheWay("downloads")
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200, data: Data("abc".utf8)) })
        let target = blocker.appendingPathComponent("sub/file.bin").path
        let task = await agent.finishedTask(DownloadRequest(url: "/file.bin", resumableDownloadPath: target))
        guard case .fileSystem(let reason) = task.error else {
            Issue.record("expected a file system error, got \(String(describing: task.error))")
            return
        }
        #expect(reason.contains(target))
    }

    @Test func aDownloadIntoAFolderThatDoesNotExistCreatesIt() async throws {
        defer { try? FileManager.default.removeItem(at: scratch) }
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200, data: Data("abc".utf8)) })
        let target = scratch.appendingPathComponent("new/deeper/file.bin").path
        let task = await agent.finishedTask(DownloadRequest(url: "/file.bin", resumableDownloadPath: target))
        #expect(task.error == nil)
        #expect(FileManager.default.contents(atPath: target) == Data("abc".utf8))
    }
}
