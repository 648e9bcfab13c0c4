import Foundation
import Testing

@testable import Errand

/// How entries live on disk: folders, permissions, eviction, corruption and concurrent use.
@Suite("Response cache: storage", .disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
struct CacheStorageTests {
    struct AccountFolder: CacheDirPathFilter {
        let account: String
        func filterCacheDirPath(_ originPath: String, request: any BaseRequest) -> String {
            originPath + "/accounts/" + account
        }
    }

    @Test func aDirectoryFilterPutsEntriesUnderItsFolder() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let ann = fixture.makeAgent { $0.addCacheDirPathFilter(AccountFolder(account: "ann")) }
        let bob = fixture.makeAgent { $0.addCacheDirPathFilter(AccountFolder(account: "bob")) }
        _ = try await ann.response(CachedRequest())
        await ann.waitForCacheWrites()
        let files = fixture.entryFiles()
        #expect(files.count == 1)
        #expect(files.first?.deletingLastPathComponent().path.hasSuffix("/accounts/ann") == true)
        #expect(bob.cacheMissReason(CachedRequest()) == .missing)
        #expect(try await !bob.response(CachedRequest()).isDataFromCache)

        await ann.clearCache(in: fixture.directory.appendingPathComponent("accounts/ann"))
        #expect(ann.cacheMissReason(CachedRequest()) == .missing)
        #expect(bob.cacheMissReason(CachedRequest()) == nil)
    }

    @Test func filesAreOwnerOnly() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent { $0.addCacheDirPathFilter(AccountFolder(account: "ann")) }
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: CachedRequest())
        await agent.waitForCacheWrites()
        let file = try #require(fixture.entryFiles().first)
        var path = file
        #expect(try permissions(of: path) == 0o600)
        for _ in 0..<3 {
            path.deleteLastPathComponent()
            #expect(try permissions(of: path) == 0o700, "\(path.path)")
        }
    }

    @Test func aStoreIsServedAtOnceAndSurvivesARestart() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let response = Response(statusCode: 201, headers: ["X-Kind": "saved"], data: Data("[1,2]".utf8))
        for index in 0..<50 {
            try await agent.saveCache(response, for: CachedRequest(url: "/n/\(index)"))
            #expect(try agent.loadCache(CachedRequest(url: "/n/\(index)")).statusCode == 201)
        }
        await agent.waitForCacheWrites()
        let restarted = fixture.makeAgent()
        let loaded = try restarted.loadCache(CachedRequest(url: "/n/49"))
        #expect(loaded.statusCode == 201)
        #expect(loaded.value(forHeader: "x-kind") == "saved")
        #expect(loaded.data == response.data)
        #expect(loaded.isDataFromCache)
    }

    @Test func theMemoryLayerServesWithoutTheFile() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: CachedRequest())
        await agent.waitForCacheWrites()
        for file in fixture.entryFiles() { try FileManager.default.removeItem(at: file) }
        #expect(agent.cacheMissReason(CachedRequest()) == nil)
        #expect(fixture.makeAgent().cacheMissReason(CachedRequest()) == .missing)
        let withoutMemory = fixture.makeAgent { $0.memoryCacheSizeLimit = 0 }
        try await withoutMemory.saveCache(
            Response(statusCode: 200, data: Data("{}".utf8)), for: CachedRequest(url: "/m"))
        await withoutMemory.waitForCacheWrites()
        for file in fixture.entryFiles() { try FileManager.default.removeItem(at: file) }
        #expect(withoutMemory.cacheMissReason(CachedRequest(url: "/m")) == .missing)
    }

    /// The thread that starts a request may be the main thread: it must never wait for a disk.
    /// Here the work that follows the read, judging the entry's age, waits until the test lets it.
    @Test(arguments: [false, true])
    func aReadFromDiskNeverHoldsUpTheThreadThatStartsTheRequest(offline: Bool) async throws {
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        let writer = fixture.makeAgent()
        try await writer.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: CachedRequest())
        await writer.waitForCacheWrites()

        let judging = DispatchSemaphore(value: 0)
        let judged = DispatchSemaphore(value: 0)
        let agent = fixture.makeAgent(transport: ManualTransport()) { config in
            config.isOffline = offline
            config.cacheClock = { [clock = fixture.clock] in
                judging.signal()
                _ = judged.wait(timeout: .now() + 20)
                return clock.now
            }
        }
        let started = DispatchSemaphore(value: 0)
        let response = Locked<Response?>(nil)
        DispatchQueue(label: "errand.tests.caller").async {
            agent.start(CachedRequest(), success: { task in response.withLock { $0 = task.response } })
            started.signal()
        }
        try await eventually { judging.wait(timeout: .now()) == .success }
        var heldUp: (any Error)?
        do {
            try await eventually { started.wait(timeout: .now()) == .success }
        } catch {
            heldUp = error
        }
        judged.signal()
        if let heldUp { throw heldUp }
        try await eventually { response[\.self] != nil }
        #expect(response[\.self]?.isDataFromCache == true)
    }

    @Test(arguments: [Corruption.truncateBody, .truncateHeader, .flipBodyByte, .garbage, .empty])
    func aDamagedFileIsAnUnreadableMissNeverACrash(_ corruption: Corruption) async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        _ = try await agent.response(CachedRequest())
        await agent.waitForCacheWrites()
        let file = try #require(fixture.entryFiles().first)
        try corruption.apply(to: file)

        let restarted = fixture.makeAgent()
        #expect(restarted.cacheMissReason(CachedRequest()) == .unreadable)
        #expect(try await !restarted.response(CachedRequest()).isDataFromCache)
        #expect(try await restarted.response(CachedRequest()).isDataFromCache, "the fresh response replaced it")
    }

    enum Corruption: CaseIterable, Sendable {
        case truncateBody, truncateHeader, flipBodyByte, garbage, empty

        func apply(to file: URL) throws {
            var data = try Data(contentsOf: file)
            switch self {
            case .truncateBody: data.removeLast(10)
            case .truncateHeader: data = data.prefix(20)
            case .flipBodyByte: data[data.count - 5] ^= 0x20
            case .garbage: data = Data((0..<500).map { UInt8(truncatingIfNeeded: $0 &* 7) })
            case .empty: data = Data()
            }
            try data.write(to: file)
        }
    }

    @Test func theLeastRecentlyUsedEntriesAreEvictedAtTheSizeLimit() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let entrySize = 4096
        let agent = fixture.makeAgent { $0.cacheSizeLimit = 4 * (entrySize + 600) }
        let body = Response(statusCode: 200, data: Data(repeating: 0x61, count: entrySize))
        for name in ["a", "b", "c", "d"] {
            try await agent.saveCache(body, for: CachedRequest(url: "/\(name)"))
            await agent.waitForCacheWrites()
        }
        _ = try agent.loadCache(CachedRequest(url: "/a"))  // a is now more recent than b
        try await agent.saveCache(body, for: CachedRequest(url: "/e"))
        await agent.waitForCacheWrites()

        #expect(agent.cacheMissReason(CachedRequest(url: "/b")) == .missing)
        for name in ["a", "c", "d", "e"] {
            #expect(agent.cacheMissReason(CachedRequest(url: "/\(name)")) == nil, "\(name)")
        }
        #expect(fixture.entryFiles().count == 4)

        // A new process orders by the files' dates and keeps to the limit as well.
        let restarted = fixture.makeAgent { $0.cacheSizeLimit = 2 * (entrySize + 600) }
        try await restarted.saveCache(body, for: CachedRequest(url: "/f"))
        await restarted.waitForCacheWrites()
        #expect(fixture.entryFiles().count == 2)
        #expect(restarted.cacheMissReason(CachedRequest(url: "/f")) == nil)
    }

    @Test func eightThreadsStoringAndReadingNeverSeeATornEntry() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        let writer = fixture.makeAgent()
        let reader = fixture.makeAgent { $0.memoryCacheSizeLimit = 0 }  // every read goes to disk
        let counts = ReadCounter()
        // Threads of their own: blocking the shared concurrency pool for seconds would stall other tests.
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            Thread {
                defer { group.leave() }
                // A number of rounds, not a time: a slow machine races as many times as a fast one.
                for sequence in 1...60 {
                    // Half the keys are shared by every thread, half are the thread's own.
                    let request = CachedRequest(url: sequence % 2 == 0 ? "/shared/\(sequence % 3)" : "/own/\(thread)")
                    let stamp = "\(thread)-\(sequence)"
                    let body = Data(String(repeating: stamp + ";", count: 1 + sequence % 200).utf8)
                    if thread % 2 == 0 {
                        try? writer.saveCacheSync(
                            Response(statusCode: 200, headers: ["X-Stamp": stamp], data: body), for: request)
                    }
                    for agent in [writer, reader] {
                        let response: Response
                        do {
                            response = try agent.loadCache(request)
                        } catch {
                            // A half-written file would read as unreadable: that is a torn entry too.
                            counts.add(torn: error as? ErrandError == .cacheMiss(.unreadable))
                            continue
                        }
                        let stampInBody = String(
                            decoding: response.data.prefix(while: { $0 != UInt8(ascii: ";") }), as: UTF8.self)
                        let whole = response.data.count % (stampInBody.utf8.count + 1) == 0
                        counts.add(torn: stampInBody != response.value(forHeader: "X-Stamp") || !whole)
                    }
                }
            }.start()
        }
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        #expect(counts.reads == 8 * 60 * 2, "every read was judged")
        #expect(counts.torn == 0)
    }

    @Test func aReadRacingARemovalNeverBringsTheEntryBack() async throws {
        let fixture = try CacheFixture()
        defer { fixture.removeDirectory() }
        // The writer's stores reach only the disk of the agent under test, whose readers must
        // read the file, racing its removal, to put it in their memory layer.
        let writer = fixture.makeAgent()
        let agent = fixture.makeAgent()
        let request = CachedRequest(url: "/raced")
        let resurrected = Locked(0)
        let group = DispatchGroup()
        let stop = Locked(false)
        for _ in 0..<3 {
            group.enter()
            Thread {
                defer { group.leave() }
                while !stop[\.self] { _ = try? agent.loadCache(request) }
            }.start()
        }
        group.enter()
        Thread {
            defer { group.leave() }
            // A number of rounds, not a time: a slow machine races as many times as a fast one.
            for _ in 0..<60 {
                try? writer.saveCacheSync(Response(statusCode: 200, data: Data("{}".utf8)), for: request)
                try? agent.removeCacheSync(request)
                if (try? agent.loadCache(request)) != nil { resurrected.withLock { $0 += 1 } }
            }
            stop.withLock { $0 = true }
        }.start()
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        #expect(resurrected[\.self] == 0, "removed entries served again")
    }

    private func permissions(of url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}

/// Read and torn-read counters shared by the stress threads.
final class ReadCounter: @unchecked Sendable {  // Sendable because `lock` guards both counters.
    private let lock = NSLock()
    private var readCount = 0
    private var tornCount = 0

    func add(torn: Bool) {
        lock.lock()
        readCount += 1
        if torn { tornCount += 1 }
        lock.unlock()
    }

    var reads: Int {
        lock.lock()
        defer { lock.unlock() }
        return readCount
    }

    var torn: Int {
        lock.lock()
        defer { lock.unlock() }
        return tornCount
    }
}
