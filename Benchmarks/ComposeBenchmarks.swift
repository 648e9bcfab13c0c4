import Errand
import Foundation

/// A batch of 100 requests from start to its one callback, answered from the cache and by a
/// stub transport; reported per child, so it reads beside the single-request numbers.
enum ComposeBenchmarks {
    static let names = ["compose.batch100.cached", "compose.batch100.stubbed"]
    static let batchSize = 100

    static func run(_ plan: Plan, progress: (String) -> Void) async throws -> [Measurement] {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("errand-benchmarks-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var results: [Measurement] = []
        for (name, caches) in [("compose.batch100.cached", true), ("compose.batch100.stubbed", false)]
        where plan.includes(name) {
            progress(name)
            let agent = makeStubAgent()
            agent.config.cacheDirectory = directory
            let batch = BatchRequest(
                requests: (0..<batchSize).map { MemberRequest(id: $0, caches: caches) }, agent: agent)
            if caches {
                _ = try await batch.responses()  // the one network response per member, stored
                await agent.waitForCacheWrites()
            }
            let (total, warmup) = plan.counts(default: 500)
            let perBatch = try await Load.callbacks(name, total: total, warmup: warmup, inFlight: 1) { done in
                batch.start(
                    success: { task in
                        done(task.isDataFromCache == caches ? nil : "the batch was not served as expected")
                    }, failure: { task in done("batch failed: \(task.error.map { "\($0)" } ?? "?")") })
            }
            results.append(perBatch.perChild(of: batchSize))
        }
        return results
    }

    struct MemberRequest: BaseRequest {
        let id: Int
        let caches: Bool
        var url: String { "/users/info" }
        var arguments: [String: any Sendable]? { ["userId": id] }
        var cacheTimeInSeconds: Int { caches ? 3600 : -1 }
    }
}

extension Measurement {
    /// This measurement of whole batches, as the cost of each of their `size` children.
    fileprivate func perChild(of size: Int) -> Measurement {
        let scale = Double(size)
        return Measurement(
            name: name, operations: operations * size,
            samples: samples.map { Duration.nanoseconds(Int64($0 / scale)) },
            wall: .nanoseconds(Int64(wallNanoseconds)), cpu: .nanoseconds(Int64(cpuNanoseconds)))
    }
}
