import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

@Suite("Secrets and paths")
struct SecretsTests {
    static let secret = "s3cr3t-Pl4nt3d-V4lu3"

    /// Carries the secret as a bearer token, a cookie, a token argument and a cache key header.
    struct Profile: BaseRequest {
        var url: String { "/json" }
        var arguments: [String: any Sendable]? { ["access_token": SecretsTests.secret, "page": 1] }
        var headers: [String: String] {
            ["Authorization": "Bearer \(SecretsTests.secret)", "Cookie": "session=\(SecretsTests.secret)"]
        }
        var cacheTimeInSeconds: Int { 60 }
        var cacheKeyHeaders: [String] { ["Authorization"] }
    }

    @Test(.disabled(if: InMemoryCacheStorage.isSelected, "reads the cache's files"))
    func noSecretReachesTheLogTheDescriptionOrTheCacheFolder() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let fixture = try CacheFixture(baseURL: server.baseURL)
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent()
        let task = await agent.finishedTask(Profile())
        #expect(task.error == nil)
        // Stored as a server would set it: the cookie must not be kept.
        try await agent.saveCache(
            Response(statusCode: 200, headers: ["Set-Cookie": "session=\(Self.secret)"], data: Data("{}".utf8)),
            for: CachedRequest(url: "/anything/cookie"))
        await agent.waitForCacheWrites()

        #expect(!DebugLog.line(for: task).contains(Self.secret))
        #expect(!task.description.contains(Self.secret))
        #expect(!String(describing: task.error).contains(Self.secret))
        let files =
            FileManager.default.enumerator(at: fixture.directory, includingPropertiesForKeys: nil)?
            .allObjects as? [URL] ?? []
        #expect(files.count >= 2)
        for file in files {
            #expect(!file.path.contains(Self.secret))
            let bytes = (try? Data(contentsOf: file)) ?? Data()
            #expect(bytes.range(of: Data(Self.secret.utf8)) == nil, "\(file.lastPathComponent) holds the secret")
        }
    }

    /// A field an `Authenticator` applied is a credential whatever its name: masked in the
    /// recording, the description, the debug log and the `curl` command as `Authorization` is.
    @Test func whatAnAuthenticatorAppliedReachesNoRecordingDescriptionOrLog() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "errand.secrets-tests")
        config.addInterceptor(
            AuthenticationInterceptor(authenticator: RedirectTests.KeyAuthenticator(), credential: .init()))
        let recorder = HARRecorder()
        config.addEventMonitor(recorder)
        struct Echo: BaseRequest {
            var url: String { "/headers" }
        }
        let agent = NetworkAgent(config: config, transport: CurlTransport())
        let task = await agent.finishedTask(Echo())
        #expect(task.error == nil)
        #expect(task.responseString?.contains("secret-client") == true, "the server got the field")
        try await eventually { recorder.entryCount == 1 }
        let recorded = String(decoding: recorder.harData(), as: UTF8.self)
        #expect(recorded.contains("X-Client"))
        for text in [recorded, task.description, DebugLog.line(for: task)] {
            #expect(!text.contains("secret-client"), "\(text)")
            #expect(!text.contains("secret-api-key"))
        }
    }

    struct Escaping: CacheDirPathFilter {
        let suffix: String
        func filterCacheDirPath(_ originPath: String, request: any BaseRequest) -> String { originPath + suffix }
    }

    @Test(arguments: ["/../../escaped", "/a/../../escaped", "/with\0nul"])
    func aCacheFolderOutsideTheCacheDirectoryIsRefused(_ suffix: String) async throws {
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent(
            transport: StubTransport { _ in Response(statusCode: 200, data: Data("{}".utf8)) }
        ) {
            $0.addCacheDirPathFilter(Escaping(suffix: suffix))
        }
        let task = await agent.finishedTask(CachedRequest())
        guard case .fileSystem(let reason) = task.error else {
            Issue.record("expected a file system error, got \(String(describing: task.error))")
            return
        }
        #expect(reason.contains("outside the cache directory"))
        #expect(throws: ErrandError.self) { try agent.saveCacheSync(Response(statusCode: 200), for: CachedRequest()) }
    }

    @Test func aFolderInsideTheCacheDirectoryIsFine() async throws {
        let fixture = try CacheFixture(baseURL: "http://example.invalid")
        defer { fixture.removeDirectory() }
        let agent = fixture.makeAgent(
            transport: StubTransport { _ in Response(statusCode: 200, data: Data("{}".utf8)) }
        ) {
            $0.addCacheDirPathFilter(Escaping(suffix: "/accounts/../accounts/ann"))
        }
        #expect(await agent.finishedTask(CachedRequest()).error == nil)
        await agent.waitForCacheWrites()
        #expect(fixture.entryFiles().allSatisfy { $0.path.contains("/accounts/ann/") })
    }

    @Test(arguments: ["/download/%2E%2E", "/download/..%2F..%2Fescaped", "/download/%00"])
    func aDownloadIntoAFolderNeverLeavesIt(_ path: String) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("errand-escape-\(UUID())")
        let inside = directory.appendingPathComponent("inside", isDirectory: true)
        try FileManager.default.createDirectory(at: inside, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let agent = NetworkAgent.testing(StubTransport { _ in Response(statusCode: 200, data: Data("abc".utf8)) })
        let task = await agent.finishedTask(DownloadRequest(url: path, resumableDownloadPath: inside.path))
        #expect(task.error == nil)
        let written = try #require(task.response?.fileURL)
        #expect(written.deletingLastPathComponent().standardizedFileURL.path == inside.standardizedFileURL.path)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["inside"])
    }
}
