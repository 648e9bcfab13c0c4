import Errand
import ErrandTestServer
import Foundation
import Testing

/// A request whose cache knobs are stored properties.
struct CachedRequest: BaseRequest {
    var url = "/anything/cached"
    var arguments: [String: any Sendable]?
    var headers: [String: String] = [:]
    var cacheTimeInSeconds = 60
    var cacheVersion = 0
    var cacheSensitiveData: String?
    var cachePolicy = CachePolicy.standard
    var cacheKeyHeaders: [String] = []
    var requestAccessories: [any RequestAccessory] = []
    var responseSerializerType = ResponseSerializerType.json
    /// Argument names left out of the cache key, as an app strips tokens.
    var argumentsOutsideKey: Set<String> = []

    func cacheKeyArguments(_ arguments: [String: any Sendable]?) -> [String: any Sendable]? {
        arguments?.filter { !argumentsOutsideKey.contains($0.key) }
    }
}

/// A wall clock the test moves by hand.
final class TestClock: @unchecked Sendable {  // Sendable because `lock` guards `current`.
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_800_000_000)

    var now: Date {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    func advance(by seconds: TimeInterval) {
        lock.lock()
        current += seconds
        lock.unlock()
    }
}

/// A cache directory of its own, a controllable clock, and agents that share them.
struct CacheFixture {
    let directory: URL
    let clock = TestClock()
    let baseURL: String
    /// What the fixture's agents share as their cache, as they share a directory: the disk by
    /// default, one ``InMemoryCacheStorage`` with `ERRAND_CACHE_STORAGE=memory`.
    let storage: InMemoryCacheStorage? = InMemoryCacheStorage.isSelected ? InMemoryCacheStorage() : nil

    init(baseURL: String? = nil) throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-cache-tests-\(UUID().uuidString)", isDirectory: true)
        self.baseURL = try baseURL ?? #require(loopbackServer, "the loopback server did not start").baseURL
    }

    /// A configuration over the fixture's directory and clock; each call makes a new one.
    func makeConfig() -> NetworkConfig {
        let config = NetworkConfig()
        config.baseUrl = baseURL
        config.cacheDirectory = directory
        config.callbackQueue = DispatchQueue(label: "errand.cache-tests.callbacks")
        config.cacheClock = { [clock] in clock.now }
        if let storage { config.cacheStorage = storage }
        return config
    }

    /// A new agent — with a memory layer of its own, as after an app restart.
    func makeAgent(transport: (any Transport)? = nil, configure: (NetworkConfig) -> Void = { _ in }) -> NetworkAgent {
        let config = makeConfig()
        configure(config)
        return NetworkAgent(config: config, transport: transport)
    }

    /// The entry files under the cache directory.
    func entryFiles() -> [URL] {
        let enumerator = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "cache" }
    }

    func removeDirectory() {
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Calls back around every stop of a task, for waiting on background work.
struct StopObserver: RequestAccessory {
    let onStop: @Sendable (RequestTask) -> Void
    func requestDidStop(_ task: RequestTask) { onStop(task) }
}

extension NetworkAgent {
    /// The reason `loadCache` gives, or `nil` when it serves an entry.
    func cacheMissReason(_ request: any BaseRequest) -> ErrandError.CacheMissReason? {
        do {
            _ = try loadCache(request)
            return nil
        } catch {
            if case .cacheMiss(let reason) = error { return reason }
            Issue.record("loadCache threw \(error)")
            return nil
        }
    }
}
