import Foundation
import Testing

@testable import Errand

/// Requests of many accounts through one ``AuthenticationInterceptor`` with an ``AccountStore``:
/// which credential each carries, where a refreshed one goes, and what signing out ends.
@Suite("Accounts and authentication")
struct AccountAuthenticationTests {
    /// Refreshes a token by appending `+` to it, after the gate opens when one is given.
    struct AppendingAuthenticator: Authenticator {
        let refreshes = Locked(0)
        let gate: AsyncStream<Void>?

        init(gate: AsyncStream<Void>? = nil) {
            self.gate = gate
        }

        func apply(_ credential: Token, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(credential.access)"
        }

        func refresh(_ credential: Token) async throws(ErrandError) -> Token {
            refreshes.withLock { $0 += 1 }
            if let gate { _ = await gate.first { _ in true } }
            return Token(access: credential.access + "+", refresh: credential.refresh)
        }
    }

    struct Feed: BaseRequest {
        var url: String { "/feed" }
        var responseSerializerType: ResponseSerializerType { .data }
    }

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "errand-accounts-\(UUID().uuidString)")
    let store: AccountStore<Token>
    let transport = ManualTransport()
    let config = NetworkConfig()

    init() throws {
        store = try AccountStore<Token>(directory: directory)
        try store.save(Token(access: "ann-1", refresh: "ra"), for: "ann")
        try store.save(Token(access: "bob-1", refresh: "rb"), for: "bob")
        config.baseUrl = "https://api.example.com"
        config.cacheDirectory = directory.appendingPathComponent("cache")
    }

    private func agent(_ authenticator: AppendingAuthenticator = AppendingAuthenticator()) -> NetworkAgent {
        config.addInterceptor(AuthenticationInterceptor(authenticator: authenticator, store: store))
        return NetworkAgent(config: config, transport: transport)
    }

    private func authorization(_ sent: ManualTransport.Sent) -> String? {
        sent.request.headers["Authorization"]
    }

    @Test func aRequestKeepsTheAccountThatWasCurrentWhenItStartedQueuedOrNot() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let agent = agent()
        agent.maxConcurrentRequests = 1
        let first = Task { try await agent.response(Feed()) }
        _ = try #require(await transport.sent(count: 1))
        let queued = Task { try await agent.response(Feed()) }
        try await eventually { agent.pipeline.scheduler.liveTasks.count == 2 }
        store.current = "bob"
        let afterSwitch = Task { try await agent.response(Feed()) }
        try await eventually { agent.pipeline.scheduler.liveTasks.count == 3 }

        for count in 1...3 {
            let sent = try #require(await transport.sent(count: count))
            sent[count - 1].respond()
        }
        _ = try await (first.value, queued.value, afterSwitch.value)
        #expect(transport.sent.map(authorization) == ["Bearer ann-1", "Bearer ann-1", "Bearer bob-1"])
    }

    /// The newcomer's sign-in: Ann signs in, then Bob on the same device; what goes out next is
    /// Bob's, and the file says he is current.
    @Test func signingInMakesTheAccountCurrentAndItsRequestsCarryItsCredential() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let agent = agent()
        try store.signIn(Token(access: "cat-1", refresh: "rc"), for: "cat")
        #expect(store.current == "cat")
        let request = Task { try await agent.response(Feed()) }
        try #require(await transport.sent(count: 1))[0].respond()
        _ = try await request.value
        #expect(transport.sent.map(authorization) == ["Bearer cat-1"])

        try store.signIn(Token(access: "ann-2", refresh: "ra"), for: "ann")
        #expect(store.current == "ann", "signing in again to a known account makes it current too")
        #expect(store.credential(for: "ann") == Token(access: "ann-2", refresh: "ra"))
        #expect(store.accounts == ["ann", "bob", "cat"], "an account keeps its place")
        #expect(try AccountStore<Token>(directory: directory).current == "ann", "in one write to the file")
    }

    @Test func aRefreshedCredentialIsSavedToItsAccountAndOutlivesTheProcess() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let agent = agent()
        let request = Task { try await agent.response(Feed()) }
        try #require(await transport.sent(count: 1))[0].respond(status: 401)
        store.current = "bob"  // while the refused request refreshes: it stays Ann's
        let resent = try #require(await transport.sent(count: 2))[1]
        #expect(authorization(resent) == "Bearer ann-1+")
        resent.respond()
        _ = try await request.value

        #expect(store.credential(for: "ann") == Token(access: "ann-1+", refresh: "ra"))
        #expect(store.credential(for: "bob") == Token(access: "bob-1", refresh: "rb"))
        #expect(try AccountStore<Token>(directory: directory).credential(for: "ann")?.access == "ann-1+")
    }

    @Test func signingOutCancelsThatAccountsRequestsAndDropsItsRefresh() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let (gate, open) = AsyncStream.makeStream(of: Void.self)
        let authenticator = AppendingAuthenticator(gate: gate)
        let agent = agent(authenticator)
        let annRefused = Task { try await agent.response(Feed()) }
        try #require(await transport.sent(count: 1))[0].respond(status: 401)
        try await eventually { authenticator.refreshes.withLock { $0 } == 1 }
        store.current = "bob"
        let bobs = Task { try await agent.response(Feed()) }
        let bobsSent = try #require(await transport.sent(count: 2))[1]

        await store.signOut("ann", agent: agent)
        await #expect(throws: ErrandError.cancelled) { try await annRefused.value }
        open.yield()
        open.finish()
        bobsSent.respond()
        _ = try await bobs.value

        #expect(store.accounts == ["bob"] && store.current == "bob")
        #expect(store.credential(for: "ann") == nil, "the refresh that ended after the sign-out is dropped")
        #expect(try AccountStore<Token>(directory: directory).accounts == ["bob"])
    }

    @Test func eachAccountCachesInItsOwnFolderAndSigningOutDeletesOnlyIts() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        struct CachedFeed: BaseRequest {
            var url: String { "/feed" }
            var cacheTimeInSeconds: Int { 600 }
            var responseSerializerType: ResponseSerializerType { .string }
        }
        config.addCacheDirPathFilter(AccountCacheDirPathFilter(store: store))
        config.addInterceptor(
            AuthenticationInterceptor(authenticator: AppendingAuthenticator(), store: store))
        let agent = NetworkAgent(
            config: config,
            transport: StubTransport { request in
                Response(statusCode: 200, data: Data((request.headers["Authorization"] ?? "none").utf8))
            })

        #expect(try await agent.response(CachedFeed()).string == "Bearer ann-1")
        store.current = "bob"
        #expect(try await agent.response(CachedFeed()).string == "Bearer bob-1")
        store.current = "ann"
        let annsCached = try await agent.response(CachedFeed())
        #expect(annsCached.isDataFromCache && annsCached.string == "Bearer ann-1", "Bob's feed is never Ann's")
        await agent.waitForCacheWrites()
        let cache = config.cacheDirectory
        #expect(FileManager.default.fileExists(atPath: cache.appendingPathComponent("account-ann").path))

        await store.signOut("ann", agent: agent)
        #expect(!FileManager.default.fileExists(atPath: cache.appendingPathComponent("account-ann").path))
        #expect(FileManager.default.fileExists(atPath: cache.appendingPathComponent("account-bob").path))
        let bobsCached = try await agent.response(CachedFeed())
        #expect(bobsCached.isDataFromCache && bobsCached.string == "Bearer bob-1")
    }

    @Test func twoAgentsSharingAStoreUseOneAnothersRefreshedCredential() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let authenticator = AppendingAuthenticator()
        let first = agent(authenticator)
        let otherConfig = NetworkConfig()
        otherConfig.baseUrl = config.baseUrl
        otherConfig.addInterceptor(AuthenticationInterceptor(authenticator: authenticator, store: store))
        let otherTransport = ManualTransport()
        let second = NetworkAgent(config: otherConfig, transport: otherTransport)

        let refused = Task { try await first.response(Feed()) }
        try #require(await transport.sent(count: 1))[0].respond(status: 401)
        try #require(await transport.sent(count: 2))[1].respond()
        _ = try await refused.value

        let later = Task { try await second.response(Feed()) }
        let sent = try #require(await otherTransport.sent(count: 1))[0]
        #expect(authorization(sent) == "Bearer ann-1+", "the other agent sends the refreshed credential")
        sent.respond()
        _ = try await later.value
        #expect(authenticator.refreshes.withLock { $0 } == 1)
    }

    @Test func aFeedKeptFreshGoesOnForTheAccountCurrentAtEachSend() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        struct CachedFeed: BaseRequest {
            var url: String { "/feed" }
            var cacheTimeInSeconds: Int { 600 }
        }
        let agent = agent()
        let (ticks, tick) = AsyncStream.makeStream(of: Void.self)
        let backoff = ReconnectBackoff(initialDelay: 0) { _ in _ = await ticks.first { _ in true } }
        let subscription = agent.keepFresh(CachedFeed(), every: 60, backoff: backoff)
        let annsSend = try #require(await transport.sent(count: 1))[0]
        #expect(authorization(annsSend) == "Bearer ann-1")

        await store.signOut("ann", agent: agent)
        try await eventually { annsSend.cancelled }
        // The send was Ann's, and ended with her sign-out.
        try await eventually { subscription.error == .cancelled }
        tick.yield()
        let bobsSend = try #require(await transport.sent(count: 2))[1]
        #expect(authorization(bobsSend) == "Bearer bob-1")
        subscription.cancel()
    }

    @Test func aStoredCredentialReachesNoLogDescriptionOrRecording() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = "ann-1"
        let recorder = HARRecorder()
        config.addEventMonitor(recorder)
        config.addInterceptor(AuthenticationInterceptor(authenticator: AppendingAuthenticator(), store: store))
        let agent = NetworkAgent(
            config: config, transport: StubTransport { _ in Response(statusCode: 200, data: Data("{}".utf8)) })
        let task = await agent.finishedTask(Feed())
        #expect(task.sentRequest?.headers["Authorization"] == "Bearer \(secret)", "the credential was sent")

        try await eventually { recorder.entryCount == 1 }
        #expect(recorder.harData().range(of: Data(secret.utf8)) == nil)
        #expect(!DebugLog.line(for: task).contains(secret))
        #expect(!task.description.contains(secret))
        #expect(!"\(task.userInfo)".contains(secret), "the task knows the account, not its credential")
    }
}
