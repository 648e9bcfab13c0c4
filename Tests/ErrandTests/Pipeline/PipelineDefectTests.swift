import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Races and defects found in review of the agent before the request pipeline, one test each;
/// each fails on the code before it.
@Suite("Pipeline defects")
struct PipelineDefectTests {
    /// Records, for each request sent, whether it was sent on the queue marked with `key`.
    final class QueueRecordingTransport: Transport {
        let inner = ManualTransport()
        let key: DispatchSpecificKey<String>
        let sentOnMarkedQueue = Locked([Bool]())

        init(key: DispatchSpecificKey<String>) {
            self.key = key
        }

        func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
            -> any TransportTask
        {
            sentOnMarkedQueue.withLock { $0.append(DispatchQueue.getSpecific(key: key) != nil) }
            return inner.send(request, events: events)
        }
    }

    @Test func aQueuedRequestDoesNotStartOnTheThreadThatFreedItsSlot() async {
        let key = DispatchSpecificKey<String>()
        let transportQueue = DispatchQueue(label: "errand.tests.transport")
        transportQueue.setSpecific(key: key, value: "transport")
        let transport = QueueRecordingTransport(key: key)
        let agent = NetworkAgent.testing(transport)
        agent.maxConcurrentRequests = 1
        let first = agent.start(AgentTests.Request("/first"))
        let second = agent.start(AgentTests.Request("/second"))
        // The transport completes the first request on its own queue, which frees the slot.
        await withCheckedContinuation { done in
            transportQueue.async {
                transport.inner.sent[0].respond()
                done.resume()
            }
        }
        guard let sent = await transport.inner.sent(count: 2) else {
            Issue.record("the queued request was never sent")
            return
        }
        sent[1].respond()
        _ = try? await first.value
        _ = try? await second.value
        #expect(transport.sentOnMarkedQueue[\.self] == [false, false])
    }

    @Test func slowResponseWorkDoesNotHoldUpOtherRequestsOfTheSession() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "errand.tests.callbacks", attributes: .concurrent)
        let agent = NetworkAgent(config: config, transport: URLSessionTransport())
        let otherFinished = DispatchSemaphore(value: 0)
        /// Its status check waits for the other request to finish: on one shared delegate queue it never would.
        struct Waiting: BaseRequest {
            let otherFinished: DispatchSemaphore
            var url: String { "/get?waiting" }
            func statusCodeValidator(_ code: Int) -> Bool {
                otherFinished.wait(timeout: .now() + .seconds(Int(timingBound(.seconds(60)).components.seconds)))
                    == .success
            }
        }
        let waiting = agent.start(Waiting(otherFinished: otherFinished))
        // Let the waiting request's response arrive first.
        _ = await agent.finishedTask(AgentTests.Request("/get?warm-up"))
        let other = await agent.finishedTask(AgentTests.Request("/delay/0"))
        otherFinished.signal()
        #expect(other.error == nil)
        await #expect(throws: Never.self) { try await waiting.value }
    }

    /// Cancels its task as soon as it starts, before the agent has claimed the download's file.
    struct CancelOnStart: RequestAccessory {
        func requestWillStart(_ task: RequestTask) { task.cancel() }
    }

    struct CancelledDownload: BaseRequest {
        let target: String
        var url: String { "/download/1000" }
        var resumableDownloadPath: String? { target }
        var requestAccessories: [any RequestAccessory] { [CancelOnStart()] }
    }

    @Test func aDownloadCancelledAsItStartsLeavesItsFileFreeForTheNext() async throws {
        let fixture = try TransferFixture()
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let target = fixture.path("raced.bin")
        let cancelled = await agent.finishedTask(CancelledDownload(target: target))
        #expect(cancelled.error == .cancelled)
        let next = await agent.finishedTask(DownloadRequest(url: "/download/1000", resumableDownloadPath: target))
        #expect(next.error == nil)
        #expect(try await TransferFixture.file(target, matchesDownloadOf: 1000, version: 1))
    }

    /// Answers the first attempt inside `send`, before the agent has its transport task, with a
    /// 206 that does not continue what the agent asked for, which restarts the download; then
    /// answers in full from another thread, as a real transport would.
    struct SynchronousTransport: Transport {
        let body = Data((0..<10).map { UInt8($0) })
        let attempts = Locked(0)

        func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
            -> any TransportTask
        {
            let attempt = attempts.withLock {
                $0 += 1; return $0
            }
            guard attempt > 1 else {
                events(.responseHead(statusCode: 206, headers: ["Content-Range": "bytes 5-9/10"]))
                events(.body(body.suffix(5)))
                events(.completed(nil))
                return Finished()
            }
            let full = StubTransport(latency: 0.1) { [body] _ in
                Response(statusCode: 200, headers: ["Content-Length": "10"], data: body)
            }
            return full.send(request, events: events)
        }

        struct Finished: TransportTask {
            func cancel() {}
        }
    }

    @Test func eventsBeforeTheTransportTaskIsKnownStillRestartADownload() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-sync-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let transport = SynchronousTransport()
        let agent = NetworkAgent.testing(transport)
        let target = directory.appendingPathComponent("file.bin").path
        let task = await agent.finishedTask(DownloadRequest(url: "/file.bin", resumableDownloadPath: target))
        #expect(task.error == nil)
        #expect(transport.attempts[\.self] == 2)
        #expect(FileManager.default.contents(atPath: target) == transport.body)
    }

    @Test(.disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
    func clearingOneFolderKeepsAFolderWhoseNameExtendsIt() async throws {
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        struct AccountFolder: CacheDirPathFilter {
            func filterCacheDirPath(_ originPath: String, request: any BaseRequest) -> String {
                originPath + "/" + ((request.arguments?["account"] as? String) ?? "none")
            }
        }
        let agent = fixture.makeAgent(
            transport: StubTransport { _ in Response(statusCode: 200, data: Data("{}".utf8)) }
        ) {
            $0.addCacheDirPathFilter(AccountFolder())
        }
        let first = CachedRequest(arguments: ["account": "acct1"])
        let tenth = CachedRequest(arguments: ["account": "acct10"])
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: first)
        try await agent.saveCache(Response(statusCode: 200, data: Data("{}".utf8)), for: tenth)
        await agent.waitForCacheWrites()
        await agent.clearCache(in: fixture.directory.appendingPathComponent("acct1"))
        #expect(agent.cacheMissReason(first) == .missing)
        // A new agent reads the disk only.
        let relaunched = fixture.makeAgent { $0.addCacheDirPathFilter(AccountFolder()) }
        #expect(relaunched.cacheMissReason(tenth) == nil)
        // The memory layer kept acct10's entry too: with its file gone, it is still served.
        let tenthFolder = fixture.directory.appendingPathComponent("acct10")
        let files = try FileManager.default.contentsOfDirectory(at: tenthFolder, includingPropertiesForKeys: nil)
        for file in files { try FileManager.default.removeItem(at: file) }
        #expect(agent.cacheMissReason(tenth) == nil)
    }

    /// A transport whose cancel is too late to stop anything: the response completes anyway.
    final class LateCancelTransport: Transport {
        let sent = Locked<[@Sendable (TransportEvent) -> Void]>([])

        struct Ignored: TransportTask {
            func cancel() {}
        }

        func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
            -> any TransportTask
        {
            sent.withLock { $0.append(events) }
            return Ignored()
        }
    }

    @Test func aDownloadCancelledJustBeforeItCompletesIsCancelledAndKeepsItsPartial() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-late-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let transport = LateCancelTransport()
        let agent = NetworkAgent.testing(transport)
        let target = directory.appendingPathComponent("file.bin").path
        let task = agent.start(DownloadRequest(url: "/file.bin", resumableDownloadPath: target))
        let events = try #require(transport.sent.withLock { $0.first })
        events(.responseHead(statusCode: 200, headers: ["Content-Length": "4", "ETag": "\"v1\""]))
        events(.body(Data("abcd".utf8)))
        task.cancel()
        events(.completed(nil))
        await #expect(throws: ErrandError.cancelled) { try await task.value }
        #expect(FileManager.default.contents(atPath: target + ".errand-partial") == Data("abcd".utf8))
        #expect(!FileManager.default.fileExists(atPath: target))
    }
}
