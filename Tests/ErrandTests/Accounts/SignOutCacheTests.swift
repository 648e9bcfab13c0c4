import Foundation
import Testing

@testable import Errand

/// What `signOut` deletes of an account's cache: its entries, wherever the filters put its
/// folder, and nothing else there; and what its requests in flight may still store.
@Suite("Accounts: signing out of the cache")
struct SignOutCacheTests {
    struct Bearer: Authenticator {
        func apply(_ credential: Token, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(credential.access)"
        }

        func refresh(_ credential: Token) async throws(ErrandError) -> Token { credential }
    }

    struct Feed: BaseRequest {
        var url = "/feed"
        var usesConfigInterceptors = true
        var cacheTimeInSeconds: Int { 600 }
        var responseSerializerType: ResponseSerializerType { .string }
    }

    /// Puts every folder under `v2/`, as an app versioning its cache does, before the account's.
    struct Versioned: CacheDirPathFilter {
        func filterCacheDirPath(_ originPath: String, request: any BaseRequest) -> String {
            originPath + "/v2"
        }
    }

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "errand-sign-out-\(UUID().uuidString)")
    let store: AccountStore<Token>
    let config = NetworkConfig()
    let storage: InMemoryCacheStorage? = InMemoryCacheStorage.isSelected ? InMemoryCacheStorage() : nil

    init() throws {
        store = try AccountStore<Token>(directory: directory)
        try store.save(Token(access: "ann-1", refresh: "ra"), for: "ann")
        try store.save(Token(access: "bob-1", refresh: "rb"), for: "bob")
        config.baseUrl = "https://api.example.com"
        config.cacheDirectory = directory.appendingPathComponent("cache")
        if let storage { config.cacheStorage = storage }
        config.addInterceptor(AuthenticationInterceptor(authenticator: Bearer(), store: store))
    }

    /// The keys of the entries stored, relative to the cache directory.
    private func entryKeys() -> [String] {
        if let storage { return storage.allKeys }
        let root = config.cacheDirectory.standardizedFileURL.path + "/"
        let enumerator = FileManager.default.enumerator(at: config.cacheDirectory, includingPropertiesForKeys: nil)
        return (enumerator?.allObjects as? [URL] ?? []).filter { $0.pathExtension == "cache" }
            .map { String($0.standardizedFileURL.path.dropFirst(root.count)) }
    }

    private func echoingAgent() -> NetworkAgent {
        NetworkAgent(
            config: config,
            transport: StubTransport { request in
                Response(statusCode: 200, data: Data((request.headers["Authorization"] ?? "none").utf8))
            })
    }

    @Test func signingOutFindsTheAccountsFolderWhereverAnotherFilterPutIt() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        config.addCacheDirPathFilter(Versioned())
        config.addCacheDirPathFilter(AccountCacheDirPathFilter(store: store))
        let agent = echoingAgent()
        _ = try await agent.response(Feed())
        store.current = "bob"
        _ = try await agent.response(Feed())
        await agent.waitForCacheWrites()
        #expect(entryKeys().filter { $0.hasPrefix("v2/account-ann/") }.count == 1)
        let avatar = config.cacheDirectory.appendingPathComponent("v2/account-ann/avatar.png")
        try FileManager.default.createDirectory(
            at: avatar.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("the app's own".utf8).write(to: avatar)

        await store.signOut("ann", agent: agent)
        #expect(entryKeys().filter { $0.hasPrefix("v2/account-ann/") }.isEmpty, "\(entryKeys())")
        #expect(entryKeys().filter { $0.hasPrefix("v2/account-bob/") }.count == 1, "Bob's entry stays")
        #expect(FileManager.default.fileExists(atPath: avatar.path), "a file Errand never wrote stays")
        #expect(try await agent.response(Feed()).isDataFromCache)
    }

    @Test func signingOutEndsRequestsThatCacheIntoTheAccountsFolderWithoutItsInterceptors() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        config.addCacheDirPathFilter(AccountCacheDirPathFilter(store: store))
        let transport = ManualTransport()
        let agent = NetworkAgent(config: config, transport: transport)
        let anonymous = Task { try await agent.response(Feed(url: "/public", usesConfigInterceptors: false)) }
        let sent = try #require(await transport.sent(count: 1))[0]
        #expect(sent.request.headers["Authorization"] == nil, "it carries no credential of Ann's")

        await store.signOut("ann", agent: agent)
        sent.respond(body: "cached for Ann")
        await #expect(throws: ErrandError.cancelled) { try await anonymous.value }
        await agent.waitForCacheWrites()
        #expect(entryKeys().filter { $0.hasPrefix("account-ann/") }.isEmpty, "\(entryKeys())")
    }
}
