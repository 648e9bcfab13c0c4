import Foundation
import Testing

@testable import Errand

/// What clearing the cache deletes: Errand's own entries, wherever the filters put them, and
/// nothing an app keeps beside them; and never an entry a request started before the clearing
/// brings back after it.
@Suite("Response cache: clearing")
struct CacheClearingTests {
    let fixture: CacheFixture

    init() throws {
        fixture = try CacheFixture(baseURL: "https://api.example.com")
    }

    /// Files an app keeps in the folder it gave Errand as its cache directory (its Caches folder).
    private func writeAppFiles(in directory: URL) throws -> [URL] {
        let images = directory.appendingPathComponent("images", isDirectory: true)
        try FileManager.default.createDirectory(at: images, withIntermediateDirectories: true)
        let files = [
            directory.appendingPathComponent("thumbnails.cache"),
            directory.appendingPathComponent("notes.txt"),
            images.appendingPathComponent("a.png"),
            // Named as Errand names its entries — a 32-hex-digit hash — but not one of them.
            directory.appendingPathComponent("0123456789abcdef0123456789abcdef.cache"),
        ]
        for file in files { try Data("the app's own".utf8).write(to: file) }
        return files
    }

    private func agent() -> NetworkAgent {
        fixture.makeAgent(transport: StubTransport { _ in Response(statusCode: 200, data: Data("{}".utf8)) })
    }

    @Test(.disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
    func clearingTheCacheDeletesErrandsEntriesAndNothingElse() async throws {
        defer { fixture.removeDirectory() }
        let agent = agent()
        _ = try await agent.response(CachedRequest())
        await agent.waitForCacheWrites()
        let appFiles = try writeAppFiles(in: fixture.directory)
        #expect(fixture.entryFiles().count == 3, "Errand's entry and the app's two .cache files")

        await agent.clearCache()
        #expect(agent.cacheMissReason(CachedRequest()) == .missing)
        for file in appFiles {
            #expect(FileManager.default.fileExists(atPath: file.path), "\(file.lastPathComponent) was deleted")
        }
        #expect(fixture.entryFiles().count == 2, "only the app's two .cache files are left")
    }

    @Test(.disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
    func clearingFollowsNoLinkOutOfTheCacheDirectory() async throws {
        defer { fixture.removeDirectory() }
        let agent = agent()
        _ = try await agent.response(CachedRequest())
        await agent.waitForCacheWrites()
        let entry = try #require(fixture.entryFiles().first)
        let outside = FileManager.default.temporaryDirectory.appendingPathComponent("errand-outside-\(UUID())")
        defer { try? FileManager.default.removeItem(at: outside) }
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let copy = outside.appendingPathComponent(entry.lastPathComponent)
        try FileManager.default.copyItem(at: entry, to: copy)
        try FileManager.default.createSymbolicLink(
            at: fixture.directory.appendingPathComponent("linked"), withDestinationURL: outside)

        await agent.clearCache()
        #expect(!FileManager.default.fileExists(atPath: entry.path))
        #expect(FileManager.default.fileExists(atPath: copy.path), "a file behind a link is not the cache's")
    }

    @Test(.disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
    func evictionTakesOnlyErrandsEntries() async throws {
        defer { fixture.removeDirectory() }
        let appFiles = try writeAppFiles(in: fixture.directory)
        let old = Date(timeIntervalSinceNow: -86_400)
        for file in appFiles {
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: file.path)
        }
        let agent = fixture.makeAgent(
            transport: StubTransport { _ in
                Response(statusCode: 200, data: Data(("[\"" + String(repeating: "a", count: 2000) + "\"]").utf8))
            }
        ) { $0.cacheSizeLimit = 5000 }
        for index in 0..<4 { _ = try await agent.response(CachedRequest(url: "/n/\(index)")) }
        await agent.waitForCacheWrites()
        for file in appFiles {
            #expect(FileManager.default.fileExists(atPath: file.path), "\(file.lastPathComponent) was evicted")
        }
    }

    /// A response that completes while its folder is being cleared, from a request started
    /// before: it must not reach the folder once the clearing is done.
    @Test func aStoreQueuedWhileItsFolderIsClearedNeverReappears() async throws {
        defer { fixture.removeDirectory() }
        let storage = GatedStorage()
        let agent = fixture.makeAgent { $0.cacheStorage = storage }
        let request = CachedRequest(url: "/feed")
        let settings = try #require(try CacheSettings(request: request, config: agent.config))
        let clearing = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            agent.clearCacheSync()
            clearing.signal()
        }
        try await eventually { storage.isClearing }
        agent.pipeline.cache.store(
            Response(statusCode: 200, data: Data("{}".utf8)), as: settings, sending: [:])
        storage.open()
        try await eventually { clearing.wait(timeout: .now()) == .success }
        await agent.waitForCacheWrites()
        #expect(agent.cacheMissReason(request) == .missing, "the entry came back after the clearing")
        #expect(storage.keys.isEmpty, "\(storage.keys)")
    }
}

/// A storage whose `removeAll(under:)` waits until the test opens it, so a test can act while a
/// clearing is under way; entries in memory.
final class GatedStorage: CacheStorage, @unchecked Sendable {  // `lock` guards the rest.
    private let lock = NSLock()
    private var entries: [String: CachedEntry] = [:]
    private var clearing = false
    private let gate = DispatchSemaphore(value: 0)

    var isClearing: Bool { lock.withLock { clearing } }
    var keys: [String] { lock.withLock { Array(entries.keys) } }

    func open() { gate.signal() }

    func entry(for key: String) -> CachedEntry? { lock.withLock { entries[key] } }
    func store(_ entry: CachedEntry, for key: String) { lock.withLock { entries[key] = entry } }
    func removeEntry(for key: String) { lock.withLock { entries[key] = nil } }

    func removeAll(under folder: String) {
        lock.withLock { clearing = true }
        gate.wait()
        lock.withLock {
            entries = folder.isEmpty ? [:] : entries.filter { !$0.key.hasPrefix(folder + "/") }
            clearing = false
        }
    }
}
