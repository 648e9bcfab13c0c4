// OfflineAccounts: many accounts on one device, each with its credential and its own cache,
// switched, kept fresh in the background, working offline, and signed out.
//
//     swift run OfflineAccounts                            # against the embedded loopback server
//     swift run OfflineAccounts --base-url http://host:80  # against any httpbin-compatible server
//
// An AccountStore keeps each account's token in an owner-only file; the AuthenticationInterceptor
// made with it sends the current account's token, and AccountCacheDirPathFilter gives each
// account a cache folder. A feed is kept fresh every second with keepFresh; when the server goes
// away the last feed is still served; offline mode answers from the cache at once; signing out
// removes the token, the cache folder and the requests of that account.

import Errand
import ErrandTestServer
import Foundation

/// A token the app got at log-in. This example makes them up; see TokenRefresh for a real log-in.
struct Token: AuthenticationCredential, Codable {
    let access: String
    var requiresRefresh: Bool { false }
}

struct TokenAuthenticator: Authenticator {
    func apply(_ credential: Token, to request: inout TransportRequest) {
        request.headers["Authorization"] = "Bearer \(credential.access)"
    }

    func refresh(_ credential: Token) async throws(ErrandError) -> Token {
        throw .api(APIError(code: "expired", message: "sign in again"))
    }
}

/// The signed-in account's feed; the server echoes the token it was sent.
struct FeedApi: BaseRequest {
    var url: String { "/anything/feed" }
    var jsonValidator: JSONValidator? { ["headers": .object([:])] }
    var cacheTimeInSeconds: Int { 300 }
    var cachePolicy: CachePolicy { .offlineFallback }
}

/// Says when the feed came from the network, and for which account: added once the feed is
/// kept fresh, it shows the sends in the background.
final class RefreshLog: EventMonitor {
    let store: AccountStore<Token>

    init(store: AccountStore<Token>) {
        self.store = store
    }

    func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
        guard task.request is FeedApi, case .success(let response) = result, !response.isDataFromCache else { return }
        print(
            "  sent for \(task.userInfo[store.accountKey] as? String ?? "nobody"): \(OfflineAccounts.token(in: response))"
        )
    }
}

@main
enum OfflineAccounts {
    static func main() async {
        do {
            try await run(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            print("OfflineAccounts failed: \(error)")
            exit(1)
        }
    }

    static func run(arguments: [String]) async throws {
        let server = try ExampleServer(arguments: arguments)
        defer { server.stop() }
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("OfflineAccounts-\(ProcessInfo.processInfo.processIdentifier)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let store = try AccountStore<Token>(directory: folder)
        let config = NetworkConfig.shared
        config.baseUrl = server.baseURL
        config.cacheDirectory = folder.appendingPathComponent("cache", isDirectory: true)
        config.addInterceptor(AuthenticationInterceptor(authenticator: TokenAuthenticator(), store: store))
        config.addCacheDirPathFilter(AccountCacheDirPathFilter(store: store))
        let agent = NetworkAgent.shared
        print("Accounts in \(store.fileURL.path), cache under \(config.cacheDirectory.path).\n")

        try store.signIn(Token(access: "ann-token"), for: "ann")
        try await show("ann signs in and opens her feed", agent: agent)
        try store.signIn(Token(access: "bob-token"), for: "bob")
        try await show("bob signs in on the same device", agent: agent)
        store.current = "ann"
        let annsCached = try await FeedApi().response()
        print(
            "ann switches back: her feed at once, from the cache (\(annsCached.isDataFromCache)): \(token(in: annsCached))"
        )
        guard annsCached.isDataFromCache, token(in: annsCached) == "Bearer ann-token" else {
            throw ExampleFailure("ann was not shown her own cached feed")
        }
        await agent.waitForCacheWrites()
        print("Cache folders: \(try folders(in: config.cacheDirectory).joined(separator: ", "))\n")

        print("ann's feed is kept fresh every second:")
        config.addEventMonitor(RefreshLog(store: store))
        let keeper = agent.keepFresh(FeedApi(), every: 1)
        try await Task.sleep(for: .milliseconds(2500))
        keeper.cancel()
        print()

        print("The server goes away.")
        let offline: NetworkAgent
        if let running = server.embedded {
            running.stop()
            offline = agent
        } else {
            // A server we do not own cannot be stopped: the network fails instead, as in airplane mode.
            offline = NetworkAgent(
                config: config,
                transport: StubTransport { _ throws(ErrandError) in
                    throw .transport(URLError(.notConnectedToInternet))
                })
        }
        let fallback = try await offline.response(FeedApi(), ignoreCache: true)
        print("  ann pulls to refresh: the last feed, from the cache (\(fallback.isDataFromCache)).")
        guard fallback.isDataFromCache else { throw ExampleFailure("offline fallback did not serve the cache") }
        config.isOffline = true
        let tunnel = try await agent.response(FeedApi())
        print("  in a tunnel, offline mode: from the cache at once, never the network (\(tunnel.isDataFromCache)).")
        config.isOffline = false

        await store.signOut("ann", agent: agent)
        print("\nann signs out: accounts \(store.accounts), current \(store.current ?? "none").")
        print("Cache folders: \(try folders(in: config.cacheDirectory).joined(separator: ", "))")
        let reopened = try AccountStore<Token>(directory: folder)
        print("After a restart the store holds \(reopened.accounts), current \(reopened.current ?? "none").")
        guard reopened.accounts == ["bob"], try folders(in: config.cacheDirectory) == ["account-bob"] else {
            throw ExampleFailure("signing out left ann's token or cache behind")
        }
    }

    /// A screen opening: the feed from the network, and whose token it was sent with.
    static func show(_ label: String, agent: NetworkAgent) async throws {
        let feed = try await agent.response(FeedApi())
        print("\(label): sent with \(token(in: feed))")
    }

    /// The `Authorization` the server saw, as it echoed it.
    static func token(in feed: Response) -> String {
        ((feed.jsonObject as? [String: Any])?["headers"] as? [String: String])?["Authorization"] ?? "none"
    }

    static func folders(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") }.sorted()
    }
}

struct ExampleFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
