import Foundation
import Testing

@testable import Errand

/// A storage of the app's own under ``NetworkConfig/cacheStorage``: what it is handed, and what
/// the agent makes of what it hands back.
@Suite("Response cache: your own storage")
struct CustomCacheStorageTests {
    /// Records the keys it is asked about, and fails reads when told to.
    final class RecordingStorage: CacheStorage, @unchecked Sendable {  // `lock` guards the two vars.
        private let lock = NSLock()
        private var entries: [String: CachedEntry] = [:]
        private var removedFolders: [String] = []
        let failsReads: Bool

        init(failsReads: Bool = false) {
            self.failsReads = failsReads
        }

        var keys: [String] { lock.withLock { entries.keys.sorted() } }
        var removed: [String] { lock.withLock { removedFolders } }

        func entry(for key: String) throws(ErrandError) -> CachedEntry? {
            if failsReads { throw .fileSystem("the database is locked") }
            return lock.withLock { entries[key] }
        }

        func store(_ entry: CachedEntry, for key: String) {
            lock.withLock { entries[key] = entry }
        }

        func removeEntry(for key: String) {
            lock.withLock { entries[key] = nil }
        }

        func removeAll(under folder: String) {
            lock.withLock {
                removedFolders.append(folder)
                entries = entries.filter { !$0.key.hasPrefix(folder + "/") }
            }
        }
    }

    struct Folder: CacheDirPathFilter {
        let name: String
        func filterCacheDirPath(_ originPath: String, request: any BaseRequest) -> String {
            originPath + "/" + name
        }
    }

    let fixture: CacheFixture

    init() throws {
        fixture = try CacheFixture()
    }

    @Test func entriesGoToTheStorageUnderKeysThatBeginWithTheirFolder() async throws {
        defer { fixture.removeDirectory() }
        let storage = RecordingStorage()
        let agent = fixture.makeAgent {
            $0.cacheStorage = storage
            $0.addCacheDirPathFilter(Folder(name: "account-ann"))
        }
        let stored = try await agent.response(CachedRequest(responseSerializerType: .data))
        await agent.waitForCacheWrites()

        #expect(storage.keys.count == 1)
        #expect(storage.keys.first?.hasPrefix("account-ann/") == true)
        #expect(fixture.entryFiles().isEmpty, "nothing is written to the disk")
        let key = try #require(storage.keys.first)
        let entry = try #require(try storage.entry(for: key))
        #expect(entry.statusCode == 200 && entry.body == stored.data)

        // An agent made later, with a memory layer of its own, is answered from the storage.
        let restarted = fixture.makeAgent {
            $0.cacheStorage = storage
            $0.addCacheDirPathFilter(Folder(name: "account-ann"))
        }
        let cached = try restarted.loadCache(CachedRequest(responseSerializerType: .data))
        #expect(cached.isDataFromCache && cached.data == stored.data)

        await restarted.clearCache(in: fixture.directory.appendingPathComponent("account-ann"))
        #expect(storage.removed == ["account-ann"])
        #expect(storage.keys.isEmpty)
    }

    @Test func aStorageThatCannotReadIsAnUnreadableMissAndTheNetworkAnswers() async throws {
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent { $0.cacheStorage = RecordingStorage(failsReads: true) }
        #expect(agent.cacheMissReason(CachedRequest(url: "/anything/locked")) == .unreadable)
        let response = try await agent.response(CachedRequest(url: "/anything/locked"))
        #expect(!response.isDataFromCache)
    }

    @Test func theDiskStorageKeepsItsKeysInsideItsDirectory() throws {
        defer { fixture.removeDirectory() }
        let disk = DiskCacheStorage(directory: fixture.directory, sizeLimit: 0)
        let entry = CacheEntry(
            response: Response(statusCode: 200, headers: ["ETag": "\"v1\""], data: Data("body".utf8)),
            key: try CacheKey(request: CachedRequest(), config: fixture.makeConfig()),
            settings: try #require(try CacheSettings(request: CachedRequest(), config: fixture.makeConfig())),
            appVersion: "1.0", storedAt: Date(timeIntervalSince1970: 1_800_000_000)
        ).cached

        try disk.store(entry, for: "folder/entry.cache")
        #expect(try disk.entry(for: "folder/entry.cache") == entry)
        #expect(entry.entityTag == "\"v1\"")
        for escaping in ["../outside.cache", "folder/../../outside.cache", "/etc/passwd", "", "a\0b"] {
            #expect(throws: ErrandError.self) { try disk.store(entry, for: escaping) }
            #expect(try disk.entry(for: escaping) == nil)
        }
        disk.removeAll(under: "folder")
        #expect(try disk.entry(for: "folder/entry.cache") == nil)
    }

    /// What the disk storage's documentation suggests: a wrapper that stores its own body (here
    /// every byte inverted, as an encryption would change it) reads it back intact.
    @Test func aWrapperThatChangesTheBodyReadsItBack() throws {
        defer { fixture.removeDirectory() }
        let disk = DiskCacheStorage(directory: fixture.directory, sizeLimit: 0)
        var entry = CacheEntry(
            response: Response(statusCode: 200, data: Data("body".utf8)),
            key: try CacheKey(request: CachedRequest(), config: fixture.makeConfig()),
            settings: try #require(try CacheSettings(request: CachedRequest(), config: fixture.makeConfig())),
            appVersion: "1.0", storedAt: Date(timeIntervalSince1970: 1_800_000_000)
        ).cached
        entry.body = Data(entry.body.map { ~$0 })
        try disk.store(entry, for: "folder/sealed.cache")
        let read = try #require(try disk.entry(for: "folder/sealed.cache"))
        #expect(Data(read.body.map { ~$0 }) == Data("body".utf8))
    }
}
