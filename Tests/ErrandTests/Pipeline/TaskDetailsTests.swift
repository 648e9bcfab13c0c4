import ErrandScenarios
import Foundation
import Testing

@testable import Errand

@Suite("Task tag, user info and description")
struct TaskDetailsTests {
    struct TagRecorder: RequestAccessory {
        let seen: Locked<[Int]>
        func requestWillStart(_ task: RequestTask) { seen.withLock { $0.append(task.tag) } }
    }

    struct Tagged: BaseRequest {
        let recorder: TagRecorder
        var url: String { "/tagged" }
        // A day: beside the whole suite under the sanitizer, the two starts have been minutes apart.
        var cacheTimeInSeconds: Int { 86_400 }
        var requestAccessories: [any RequestAccessory] { [recorder] }
    }

    @Test func tagAndUserInfoGivenAtStartAreSeenByAccessoriesAndCacheServedCallbacks() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-tags-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200, data: Data("{}".utf8)) })
        agent.config.cacheDirectory = directory
        let recorder = TagRecorder(seen: Locked([]))
        let request = Tagged(recorder: recorder)
        for tag in [7, 8] {
            let task: RequestTask = await withCheckedContinuation { continuation in
                agent.start(
                    request, tag: tag, userInfo: ["screen": "feed"], success: { continuation.resume(returning: $0) },
                    failure: { continuation.resume(returning: $0) })
            }
            #expect(task.tag == tag)
            #expect(task.userInfo["screen"] as? String == "feed")
            #expect(task.isDataFromCache == (tag == 8))
        }
        #expect(recorder.seen[\.self] == [7, 8])
    }

    @Test func theDescriptionShowsAttemptsTagAndCacheSettings() async throws {
        struct Cached: BaseRequest {
            var url: String { "/described" }
            var cacheTimeInSeconds: Int { 60 }
            var cachePolicy: CachePolicy { .offlineFallback }
            var interceptors: [any RequestInterceptor] { [RetryPolicy(baseDelay: 0)] }
        }
        let attempts = Locked(0)
        let agent = NetworkAgent.testing(
            StubTransport { _ in
                let attempt = attempts.withLock {
                    $0 += 1; return $0
                }
                return Response(statusCode: attempt < 3 ? 503 : 200, data: Data("{}".utf8))
            })
        agent.config.cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-\(UUID())")
        defer { try? FileManager.default.removeItem(at: agent.config.cacheDirectory) }
        let task = await agent.finishedTask(Cached(), tag: 42)
        #expect(task.error == nil)
        let description = task.description
        #expect(description.contains("attempts 3"))
        #expect(description.contains("tag 42"))
        #expect(description.contains("cache 60 s, offlineFallback"))
    }

    @Test(.enabled(if: CurlTransport.isAvailable)) func aTaskCarriesTheTransportsTimings() async throws {
        let server = try #require(loopbackServer)
        let curl = NetworkAgent.testing(CurlTransport(), baseUrl: server.baseURL)
        let task = await curl.finishedTask(AgentTests.Request("/get"))
        #expect(task.error == nil)
        let metrics = try #require(task.metrics)
        #expect(metrics.httpVersion == "HTTP/1.1")
        #expect(metrics.total > 0 && metrics.firstByte <= metrics.total)
        let stubbed = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200) })
        #expect(await stubbed.finishedTask(AgentTests.Request("/get")).metrics == nil)
    }
}
