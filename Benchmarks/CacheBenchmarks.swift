import Errand
import Foundation

/// A cache hit from `start` to callback, served from the memory layer and from disk; and the
/// cost of storing a fresh response. A hit must cost nothing like the network's half millisecond.
enum CacheBenchmarks {
    static let names = [
        "cache.memory-hit.callbacks", "cache.memory-hit.async", "cache.disk-hit.callbacks", "cache.disk-hit.async",
        "cache.miss-and-store.async",
    ]

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Measurement] {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-benchmarks-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let request = CachedUserInfoRequest()
        var results: [Measurement] = []
        for (layer, memoryLimit) in [("memory", 8 << 20), ("disk", 0)] {
            let agent = makeStubAgent()
            agent.config.cacheDirectory = directory
            agent.config.memoryCacheSizeLimit = memoryLimit
            _ = try await agent.response(request)  // the one network response, stored
            await agent.waitForCacheWrites()
            let name = "cache.\(layer)-hit.callbacks"
            if plan.includes(name) {
                progress(name)
                let (total, warmup) = plan.counts(default: 20_000)
                results.append(
                    try await Load.callbacks(name, total: total, warmup: warmup, inFlight: 1) { done in
                        agent.start(request, outcome: done)
                    })
            }
            let asyncName = "cache.\(layer)-hit.async"
            if plan.includes(asyncName) {
                progress(asyncName)
                let (total, warmup) = plan.counts(default: 20_000)
                results.append(
                    try await Load.async(asyncName, total: total, warmup: warmup, inFlight: 1) {
                        guard try await agent.response(request).isDataFromCache else {
                            throw CacheBenchmarkError.notAHit
                        }
                    })
            }
        }
        let storeName = "cache.miss-and-store.async"
        if plan.includes(storeName) {
            progress(storeName)
            let agent = makeStubAgent()
            agent.config.cacheDirectory = directory
            let (total, warmup) = plan.counts(default: 5_000)
            results.append(
                try await Load.async(storeName, total: total, warmup: warmup, inFlight: 1) {
                    _ = try await agent.response(request, ignoreCache: true)
                })
            await agent.waitForCacheWrites()
        }
        return results
    }

    enum CacheBenchmarkError: Error {
        case notAHit
    }
}
