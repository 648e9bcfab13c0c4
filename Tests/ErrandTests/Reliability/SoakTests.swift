import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Many requests from many threads, mixing every way a request can go, against the loopback server.
@Suite("Soak", .serialized)
struct SoakTests {
    static let total = 20_000
    static let threads = 32

    struct Plain: BaseRequest {
        var url: String
        var method: HTTPMethod = .get
        var arguments: [String: any Sendable]?
        var cacheTimeInSeconds = -1
        var interceptors: [any RequestInterceptor] = []
        var resumableDownloadPath: String?
        var constructingBody: (@Sendable (inout MultipartFormData) -> Void)?
        var responseSerializerType: ResponseSerializerType { .data }
    }

    /// The request number `index` sends: a mix of plain, cached, retried, downloaded, cancelled,
    /// posted, failing and (rarely) large multipart requests.
    static func request(_ index: Int, downloads: URL) -> (request: Plain, cancelAtOnce: Bool) {
        if index % 1000 == 999 {
            let big = Data(count: (1 << 20) + 4096)
            return (Plain(url: "/upload", method: .post, constructingBody: { $0.append(big, name: "big") }), false)
        }
        switch index % 10 {
        case 4: return (Plain(url: "/get?cached", cacheTimeInSeconds: 600), false)
        case 5:
            let retry = RetryPolicy(maxAttempts: 2, baseDelay: 0.001, maxDelay: 0.01)
            return (Plain(url: "/flaky/soak-\(index)?failures=1", interceptors: [retry]), false)
        case 6:
            let target = downloads.appendingPathComponent("file-\(index)").path
            return (Plain(url: "/download/20000", resumableDownloadPath: target), index % 20 == 6)
        case 7: return (Plain(url: "/delay/1"), true)
        case 8: return (Plain(url: "/post", method: .post, arguments: ["n": index]), false)
        case 9: return (Plain(url: "/status/500"), false)
        default: return (Plain(url: "/get?n=\(index)"), false)
        }
    }

    @Test func twentyThousandRequestsOverThirtyTwoThreadsEachCallBackOnceAndLeaveNothing() async throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("errand-soak-\(UUID())")
        let downloads = scratch.appendingPathComponent("downloads", isDirectory: true)
        try FileManager.default.createDirectory(at: downloads, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        // Descriptors the process opens once and keeps (Dispatch's own) are not leaks: count
        // from after a first, smaller round. Sockets count: a released transport closes its connections.
        try await Self.warmUp(downloads: downloads)
        let descriptorsBefore = Self.descriptorTargets()
        let uploadFilesBefore = Self.uploadTemporaryFiles()

        let server = try TestServer()
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.cacheDirectory = scratch.appendingPathComponent("cache", isDirectory: true)
        config.callbackQueue = DispatchQueue(label: "errand.soak.callbacks", attributes: .concurrent)
        var agent: NetworkAgent? = NetworkAgent(config: config)
        let counts = Locked([Int](repeating: 0, count: Self.total))
        let inFlight = DispatchSemaphore(value: 256)
        let allDone = DispatchGroup()
        let residentAfterWarmUp = Locked<Int?>(nil)

        var workers = (0..<Self.threads).map { worker in
            Thread { [agent] in
                guard let agent else { return }
                for index in stride(from: worker, to: Self.total, by: Self.threads) {
                    inFlight.wait()
                    let (request, cancelAtOnce) = Self.request(index, downloads: downloads)
                    let done: @Sendable (RequestTask) -> Void = { _ in
                        counts.withLock { $0[index] += 1 }
                        inFlight.signal()
                        allDone.leave()
                    }
                    let task = agent.start(request, success: done, failure: done)
                    if cancelAtOnce { task.cancel() }
                    if index % 2500 == 0 { agent.cancelAllRequests() }
                    if index == 2000 { residentAfterWarmUp.withLock { $0 = Self.residentKilobytes() } }
                }
            }
        }
        for _ in 0..<Self.total { allDone.enter() }
        workers.forEach { $0.start() }
        let finished = await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: allDone.wait(timeout: .now() + 120)) }
        }
        #expect(finished == .success, "not every request called back within 120 s")
        let counted = counts[\.self]
        let notOnce = counted.indices.filter { counted[$0] != 1 }
        #expect(
            notOnce.isEmpty, "\(notOnce.count) requests did not call back exactly once, first: \(notOnce.prefix(10))")
        #expect(agent?.pipeline.scheduler.liveTasks.isEmpty == true)
        let residentAtEnd = Self.residentKilobytes()
        if let warm = residentAfterWarmUp[\.self], let residentAtEnd {
            #expect(residentAtEnd - warm < 64 * 1024, "resident memory grew by \((residentAtEnd - warm) / 1024) MiB")
        }
        await agent?.waitForCacheWrites()
        // The threads' closures hold the agent too: release them, so the agent and its transport go.
        workers = []
        agent = nil
        server.stop()
        // A cancelled upload's body file goes once the transport has stopped reading it, which
        // can be just after the callback.
        var uploadFilesAfter = Self.uploadTemporaryFiles()
        for _ in 0..<100 where uploadFilesAfter != uploadFilesBefore {
            try await Task.sleep(nanoseconds: 50_000_000)
            uploadFilesAfter = Self.uploadTemporaryFiles()
        }
        #expect(uploadFilesAfter == uploadFilesBefore)
        let cacheTemporaries =
            FileManager.default.enumerator(atPath: config.cacheDirectory.path)?
            .compactMap { $0 as? String }.filter { $0.hasSuffix(OwnerOnlyFile.temporarySuffix) } ?? []
        #expect(cacheTemporaries.isEmpty)
        var descriptorsAfter = Self.descriptorTargets()
        for _ in 0..<100 where descriptorsAfter.count > descriptorsBefore.count + 2 {
            try await Task.sleep(nanoseconds: 50_000_000)
            descriptorsAfter = Self.descriptorTargets()
        }
        #expect(
            descriptorsAfter.count <= descriptorsBefore.count + 2,
            "left open: \(descriptorsAfter), before: \(descriptorsBefore)")
    }

    /// Every kind of request once, from an agent that is then released, and a server that is stopped.
    static func warmUp(downloads: URL) async throws {
        let server = try TestServer()
        defer { server.stop() }
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.cacheDirectory = downloads.appendingPathComponent("warm-up-cache", isDirectory: true)
        config.callbackQueue = DispatchQueue(label: "errand.soak.warm-up")
        let agent = NetworkAgent(config: config)
        for index in 0..<20 {
            let task = agent.start(request(index * 50 + index % 10, downloads: downloads).request)
            _ = try? await task.value
        }
        await agent.waitForCacheWrites()
    }

    /// What each open descriptor is: a path, `socket:[…]`, `pipe:[…]`, `anon_inode:[…]`.
    static func descriptorTargets() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.map { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0)) ?? "?" }
    }

    static func uploadTemporaryFiles() -> Set<String> {
        let names =
            (try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? []
        return Set(names.filter { $0.hasPrefix("errand-upload-") })
    }

    static func residentKilobytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return Int(line.split(separator: " ").dropFirst().first ?? "")
    }
}
