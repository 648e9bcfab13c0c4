import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// Resumable uploads where what they rely on was not what it seemed: a record written for
/// another account, a record file someone else wrote.
@Suite("Resumable uploads: hostile records")
final class ResumableUploadHostileTests {
    struct Publish: BaseRequest {
        let url: String
        let file: URL
        var method: HTTPMethod { .post }
        var headers: [String: String] { ["Authorization": "Bearer ann-secret"] }
        var responseSerializerType: ResponseSerializerType { .data }
        var resumableUploadPath: String? { file.path }
        var timeoutInterval: TimeInterval { 60 }
    }

    /// Hears the method and URL of every attempt.
    final class Attempts: EventMonitor {
        private let sentRequests = Locked<[TransportRequest]>([])
        var sent: [TransportRequest] { sentRequests[\.self] }

        func request(_ task: RequestTask, willSend request: TransportRequest) {
            sentRequests.withLock { $0.append(request) }
        }
    }

    /// Puts each account's cached responses in a folder of its own, as `AccountCacheDirPathFilter` does.
    struct AccountFolder: CacheDirPathFilter {
        let account: String

        func filterCacheDirPath(_ originPath: String, request: any BaseRequest) -> String {
            originPath + "/" + AccountCacheDirPathFilter.folderName(for: account)
        }
    }

    private let server: TestServer
    private let directory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-upload-\(UUID())")
    private let file: URL
    private let size = 1 << 20

    init() throws {
        server = try TestServer()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        file = directory.appendingPathComponent("video.bin")
        try Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 1) }).write(to: file)
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    private var cacheDirectory: URL { directory.appendingPathComponent("cache") }

    /// A new agent sharing the cache directory, as an app makes after a restart.
    private func makeAgent(
        monitor: Attempts, account: String? = nil, transport: (any Transport)? = nil, userInfo: String = ""
    ) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = server.baseURL.replacingOccurrences(of: "http://", with: "http://" + userInfo)
        config.cacheDirectory = cacheDirectory
        config.callbackQueue = DispatchQueue(label: "errand.resumable-upload-hostile-tests.callbacks")
        config.addEventMonitor(monitor)
        if let account { config.addCacheDirPathFilter(AccountFolder(account: account)) }
        return NetworkAgent(config: config, transport: transport)
    }

    /// Every record file under the cache directory, at any depth.
    private var records: [URL] {
        let files = FileManager.default.enumerator(at: cacheDirectory, includingPropertiesForKeys: nil)
        return (files?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "json" }
    }

    /// Leaves the record of an upload dropped at half that could not ask its offset: an app
    /// closed while it had no network.
    private func leaveRecord(url: String, account: String? = nil, userInfo: String = "") async throws {
        let first = await makeAgent(
            monitor: Attempts(), account: account,
            transport: ResumableUploadServerTests.NoNetworkForHEAD(inner: CurlTransport()), userInfo: userInfo
        ).finishedTask(Publish(url: url, file: file))
        #expect(first.error != nil)
        #expect(records.count == 1, "the offer outlives the task")
    }

    @Test func anotherAccountsRecordIsNotResumed() async throws {
        let url = "/resumable/shared?drop_at=\(size / 2)"
        try await leaveRecord(url: url, account: "ann")
        let bobs = Attempts()
        let response = try await makeAgent(monitor: bobs, account: "bob").response(Publish(url: url, file: file))
        #expect(response.statusCode == 200)
        // Ann's upload resource is hers: Bob's file must not be appended to it in her name.
        #expect(bobs.sent.first?.method == "POST", "\(bobs.sent.map { "\($0.method) \($0.url.path)" })")
    }

    @Test func aRecordNamingAnotherOriginIsNotFollowed() async throws {
        let url = "/resumable/elsewhere?drop_at=\(size / 2)"
        try await leaveRecord(url: url)
        let elsewhere = try TestServer()
        defer { elsewhere.stop() }
        // What a local attacker, or another program, writes into the record.
        let recordFile = try #require(records.first)
        let written = try JSONSerialization.jsonObject(with: Data(contentsOf: recordFile))
        var record = try #require(written as? [String: Any])
        record["uploadURL"] = elsewhere.baseURL + "/resumable/uploads/stolen"
        try JSONSerialization.data(withJSONObject: record).write(to: recordFile)

        let attempts = Attempts()
        let task = await makeAgent(monitor: attempts).finishedTask(Publish(url: url, file: file))
        #expect(elsewhere.receivedRequests().isEmpty, "the request's credentials would go to another origin")
        #expect(task.response?.statusCode == 200)
        #expect(attempts.sent.first?.method == "POST")
    }

    @Test func theURLsUserInformationIsNotWrittenToTheRecord() async throws {
        try await leaveRecord(url: "/resumable/userinfo?drop_at=\(size / 2)", userInfo: "ann:hunter2@")
        for record in records {
            let text = try String(decoding: Data(contentsOf: record), as: UTF8.self)
            #expect(!text.contains("hunter2"), "\(text)")
        }
        let attempts = Attempts()
        let response = try await makeAgent(monitor: attempts, userInfo: "ann:hunter2@").response(
            Publish(url: "/resumable/userinfo?drop_at=\(size / 2)", file: file))
        #expect(response.statusCode == 200)
        // The request's own user information goes with the rest of the file.
        #expect(attempts.sent.map(\.method) == ["HEAD", "PATCH"])
        #expect(attempts.sent.allSatisfy { $0.url.user == "ann" && $0.url.password == "hunter2" })
    }
}
