import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Resumable uploads end to end, against ErrandTestServer's server of the draft, under the
/// transport the suite runs with: a drop, a cancel and a new agent (an app's restart), a server
/// that does not offer, a file that changed.
@Suite("Resumable uploads against a server of the draft")
final class ResumableUploadServerTests {
    struct Publish: BaseRequest {
        let url: String
        let file: URL
        var method: HTTPMethod = .post
        var responseSerializerType: ResponseSerializerType { .data }
        var resumableUploadPath: String? { file.path }
        var timeoutInterval: TimeInterval { 60 }
    }

    /// Hears the method of every attempt.
    final class Attempts: EventMonitor {
        private let methods = Locked<[String]>([])
        var sent: [String] { methods[\.self] }

        func request(_ task: RequestTask, willSend request: TransportRequest) {
            methods.withLock { $0.append(request.method) }
        }
    }

    private let server: TestServer
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-upload-\(UUID())")
    private let file: URL
    private let size = 3 << 20
    private let attempts = Attempts()

    init() throws {
        server = try TestServer()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        file = directory.appendingPathComponent("video.bin")
        try Self.content(size: size, seed: 1).write(to: file)
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private static func content(size: Int, seed: UInt8) -> Data {
        Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) })
    }

    /// A new agent, as an app makes after a restart: only the cache directory is shared.
    private func makeAgent(transport: (any Transport)? = nil) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.cacheDirectory = directory.appendingPathComponent("cache")
        config.callbackQueue = DispatchQueue(label: "errand.resumable-upload-tests.callbacks")
        config.addEventMonitor(attempts)
        return NetworkAgent(config: config, transport: transport)
    }

    private var records: [URL] {
        let folder = directory.appendingPathComponent("cache/ResumableUploads")
        return (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
    }

    private func checksum(of file: URL) throws -> String {
        Checksum(try Data(contentsOf: file)).hexDigits
    }

    /// The server's answer to a finished upload.
    private func answer(_ response: Response) throws -> [String: Any] {
        try #require(response.jsonObject as? [String: Any])
    }

    @Test func aDropAtHalfResumesFromTheServersOffsetAndSendsNothingTwice() async throws {
        let response = try await makeAgent().response(Publish(url: "/resumable/video?drop_at=\(size / 2)", file: file))
        let body = try answer(response)
        let expected = try checksum(of: file)
        #expect(response.statusCode == 200)
        #expect(body["size"] as? Int == size && body["checksum"] as? String == expected)
        let upload = try #require(server.resumableUpload(named: "video"))
        #expect(upload.isComplete && upload.offset == Int64(size))
        // What the server read past the drop, in the read that crossed it, was in flight: sent again.
        #expect(upload.bytesRead - Int64(size) < 256 << 10, "only what was in flight went again")
        #expect(upload.offsetRetrievals == 1 && upload.appends == 1)
        #expect(attempts.sent == ["POST", "HEAD", "PATCH"])
        #expect(records.isEmpty, "the record goes with the upload")
    }

    /// Sends everything but a `HEAD`, which finds no network: an app that lost its connection
    /// mid-upload and was closed before it came back.
    struct NoNetworkForHEAD: Transport {
        let inner: any Transport

        func send(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void)
            -> any TransportTask
        {
            guard request.method == "HEAD" else { return inner.send(request, events: events) }
            events(.completed(.transport(URLError(.notConnectedToInternet))))
            return Ended()
        }

        struct Ended: TransportTask {
            func cancel() {}
        }
    }

    @Test func anUploadThatCouldNotResumeResumesWhenANewAgentStartsItAgain() async throws {
        let first = await makeAgent(transport: NoNetworkForHEAD(inner: CurlTransport()))
            .finishedTask(Publish(url: "/resumable/restart?drop_at=\(size / 2)", file: file))
        guard case .transport(let failure) = first.error else {
            Issue.record("the first agent's upload ended with \(String(describing: first.error))")
            return
        }
        #expect(failure.code == .notConnectedToInternet)
        #expect(records.count == 1, "the offer outlives the task")
        #expect(server.resumableUpload(named: "restart")?.offset == Int64(size / 2))

        let response = try await makeAgent().response(
            Publish(url: "/resumable/restart?drop_at=\(size / 2)", file: file))
        let expected = try checksum(of: file)
        #expect(try answer(response)["checksum"] as? String == expected)
        let upload = try #require(server.resumableUpload(named: "restart"))
        #expect(upload.isComplete && upload.creations == 1 && upload.appends == 1)
        #expect(attempts.sent.filter { $0 != "HEAD" } == ["POST", "PATCH"], "\(attempts.sent)")
        #expect(records.isEmpty)
    }

    private static let childVariable = "ERRAND_RESUMABLE_UPLOAD_CHILD"
    private static let marker = "upload-outcome: "

    /// The child's part of the next test: uploads until the connection drops and the network is
    /// gone, prints how that ended, and exits — an app closed mid-upload.
    @Test(.enabled(if: ProcessInfo.processInfo.environment[childVariable] != nil))
    func childUploadsUntilTheNetworkGoes() async throws {
        let parts = try #require(ProcessInfo.processInfo.environment[Self.childVariable]).split(separator: "|")
        try #require(parts.count == 3)
        let config = NetworkConfig()
        config.cacheDirectory = URL(fileURLWithPath: String(parts[1]))
        config.callbackQueue = DispatchQueue(label: "errand.resumable-upload-tests.child")
        let agent = NetworkAgent(config: config, transport: NoNetworkForHEAD(inner: CurlTransport()))
        let task = await agent.finishedTask(
            Publish(url: String(parts[0]), file: URL(fileURLWithPath: String(parts[2]))))
        print(Self.marker + (task.error.map { "\($0)" } ?? "none"))
    }

    @Test func anUploadResumesInTheNextProcessFromWhereTheLastOneLeftIt() async throws {
        let url = server.baseURL + "/resumable/process?drop_at=\(size / 2)"
        let cache = directory.appendingPathComponent("cache")
        let ending = try await ChildTest.run(
            "childUploadsUntilTheNetworkGoes", environment: [Self.childVariable: "\(url)|\(cache.path)|\(file.path)"])
        let outcome = try #require(ending.line(after: Self.marker), "the child said nothing:\n\(ending.tail)")
        #expect(outcome.contains("-1009"), "the child's upload ended as the network went: \(outcome)")
        #expect(server.resumableUpload(named: "process")?.offset == Int64(size / 2))
        #expect(records.count == 1)

        let response = try await makeAgent().response(Publish(url: url, file: file))
        let expected = try checksum(of: file)
        #expect(try answer(response)["checksum"] as? String == expected)
        let upload = try #require(server.resumableUpload(named: "process"))
        #expect(upload.isComplete && upload.creations == 1 && upload.appends == 1)
        #expect(attempts.sent == ["HEAD", "PATCH"], "the new process asked, then sent the rest")
        #expect(records.isEmpty)
    }

    @Test func progressReachesTheFileSizeAndNeverGoesBackAcrossADrop() async throws {
        let task = makeAgent().start(Publish(url: "/resumable/progress?drop_at=\(size / 3)", file: file))
        var reported: [Int64] = []
        for await progress in task.uploadProgress {
            reported.append(progress.completedBytes)
            #expect(progress.totalBytes == Int64(size))
        }
        _ = try await task.value
        #expect(reported.last == Int64(size))
        #expect(zip(reported, reported.dropFirst()).allSatisfy { $0 <= $1 }, "\(reported)")
    }

    @Test func aServerThatOffersNothingGetsAnOrdinaryUpload() async throws {
        let response = try await makeAgent().response(Publish(url: "/upload", file: file))
        #expect(try answer(response)["bytes"] as? Int == size)
        #expect(records.isEmpty)
        let sent = try #require(server.receivedRequests(path: "/upload").last)
        #expect(sent.header("Upload-Complete") == "?1" && sent.header("Upload-Length") == String(size))
    }

    @Test func aDropBeforeAnyOfferFailsAsAnyUploadWould() async throws {
        let task = await makeAgent().finishedTask(Publish(url: "/resumable/silent?drop_at=1000&no_104=1", file: file))
        guard case .transport = task.error else {
            Issue.record("an upload the server never offered to resume ended with \(String(describing: task.error))")
            return
        }
        #expect(attempts.sent == ["POST"])
        #expect(records.isEmpty)
    }

    @Test func aFileThatChangedSinceItsUploadWasCancelledStartsOver() async throws {
        let first = makeAgent().start(Publish(url: "/resumable/changed", file: file))
        for await progress in first.uploadProgress where progress.completedBytes > 0 {
            first.cancel()
            break
        }
        _ = try? await first.value
        try Self.content(size: size + 7, seed: 2).write(to: file)
        let response = try await makeAgent().response(Publish(url: "/resumable/changed", file: file))
        let expected = try checksum(of: file)
        #expect(try answer(response)["checksum"] as? String == expected)
        #expect(attempts.sent == ["POST", "POST"], "no resumption of the file as it was")
    }

    @Test func aMethodWithoutABodyOrBothBodiesIsRefusedNamingTheProperty() async throws {
        struct Both: BaseRequest {
            let file: URL
            var url: String { "/upload" }
            var method: HTTPMethod { .post }
            var uploadBody: UploadBody? { .data(Data("x".utf8)) }
            var resumableUploadPath: String? { file.path }
        }
        let agent = makeAgent()
        let get = await agent.finishedTask(Publish(url: "/upload", file: file, method: .get))
        let both = await agent.finishedTask(Both(file: file))
        for task in [get, both] {
            guard case .serialization(let reason) = task.error else {
                Issue.record("sent: \(String(describing: task.error))")
                continue
            }
            #expect(reason.contains("resumableUploadPath"))
        }
        #expect(attempts.sent.isEmpty)
    }
}
