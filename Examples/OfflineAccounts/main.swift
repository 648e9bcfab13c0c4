// OfflineAccounts: a per-account response cache that keeps a screen working offline.
//
//     swift run OfflineAccounts                            # against the embedded loopback server
//     swift run OfflineAccounts --base-url http://host:80  # against any httpbin-compatible server
//
// Two accounts get separate cache folders through a CacheDirPathFilter; their rotating tokens
// are stripped from the cache key; a screen refresh shows the cached feed, then the fresh one;
// when the server goes away, the last feed is still served; and in offline mode the cache answers
// at once without trying the network.

import Errand
import ErrandTestServer
import Foundation

/// The signed-in account's feed. The token rotates, so it is left out of the cache key.
struct FeedApi: BaseRequest {
    let account: String
    let token: String

    var url: String { "/anything/feed" }
    var arguments: [String: any Sendable]? { ["token": token, "account": account, "page": 1] }
    var jsonValidator: JSONValidator? { ["args": ["account": .string]] }
    var cacheTimeInSeconds: Int { 300 }
    // Never serve one account's feed to another, even if both shared a folder.
    var cacheSensitiveData: String? { account }
    var cachePolicy: CachePolicy { .offlineFallback }

    func cacheKeyArguments(_ arguments: [String: any Sendable]?) -> [String: any Sendable]? {
        arguments?.filter { $0.key != "token" }
    }
}

/// Puts each account's entries in a folder of its own, so signing out can delete just them.
struct AccountCacheFolder: CacheDirPathFilter {
    let account: String
    func filterCacheDirPath(_ originPath: String, request: any BaseRequest) -> String {
        originPath + "/accounts/" + account
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
        let config = NetworkConfig.shared
        let server = try ExampleServer(arguments: arguments)
        config.baseUrl = server.baseURL
        defer { server.stop() }
        config.cacheDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("OfflineAccounts-\(ProcessInfo.processInfo.processIdentifier)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: config.cacheDirectory) }
        print("Caching under \(config.cacheDirectory.path).\n")

        signIn("ann")
        try await refreshScreen(FeedApi(account: "ann", token: "ann-token-1"), label: "ann opens the app")
        try await refreshScreen(FeedApi(account: "ann", token: "ann-token-2"), label: "ann pulls to refresh, new token")

        signIn("bob")
        try await refreshScreen(FeedApi(account: "bob", token: "bob-token-1"), label: "bob signs in on the same device")
        await NetworkAgent.shared.waitForCacheWrites()
        print("Cache folders: \(try accountFolders().joined(separator: ", "))\n")

        signIn("ann")
        print("The server goes away.")
        let offline: NetworkAgent
        if let running = server.embedded {
            running.stop()
            offline = NetworkAgent.shared
        } else {
            // A server we do not own cannot be stopped: the network fails instead, as in airplane mode.
            offline = NetworkAgent(
                config: config,
                transport: StubTransport { _ throws(ErrandError) in
                    throw .transport(URLError(.notConnectedToInternet))
                })
        }
        let fallback = try await offline.response(FeedApi(account: "ann", token: "ann-token-3"), ignoreCache: true)
        print(
            "  ann pulls to refresh: served from the cache (isDataFromCache \(fallback.isDataFromCache), "
                + "isStale \(fallback.isStale)), \(fallback.data.count) bytes of the last feed.")
        guard fallback.isDataFromCache else { throw ExampleFailure("offline fallback did not serve the cache") }
        try await showOfflineMode(config)

        await NetworkAgent.shared.clearCache(in: config.cacheDirectory.appendingPathComponent("accounts/bob"))
        print("  bob signs out; his folder is deleted. Folders left: \(try accountFolders().joined(separator: ", ")).")
    }

    /// A phone in a tunnel: the app switches to offline mode instead of waiting for timeouts.
    static func showOfflineMode(_ config: NetworkConfig) async throws {
        print("\nThe phone enters a tunnel: NetworkConfig.isOffline = true.")
        config.isOffline = true
        defer { config.isOffline = false }
        let started = ContinuousClock.now
        let feed = try await NetworkAgent.shared.response(FeedApi(account: "ann", token: "ann-token-4"))
        let elapsed = ContinuousClock.now - started
        let milliseconds = Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000
        print(
            "  ann opens the feed: from the cache, never the network (isDataFromCache \(feed.isDataFromCache)), "
                + "in \(String(format: "%.1f", milliseconds)) ms.")
        guard feed.isDataFromCache else { throw ExampleFailure("offline mode did not serve the cache") }
        do {
            _ = try await NetworkAgent.shared.response(FeedApi(account: "carol", token: "carol-token-1"))
            throw ExampleFailure("offline mode answered a request it has no entry for")
        } catch ErrandError.cacheMiss(.missing) {
            print("  a feed never loaded here fails at once: cacheMiss(missing).")
        }
    }

    static func signIn(_ account: String) {
        NetworkConfig.shared.clearCacheDirPathFilters()
        NetworkConfig.shared.addCacheDirPathFilter(AccountCacheFolder(account: account))
    }

    /// A screen refresh: show what is cached at once, then what the server says.
    static func refreshScreen(_ feed: FeedApi, label: String) async throws {
        print("\(label):")
        var shown: [String] = []
        for try await response in NetworkAgent.shared.cacheThenNetwork(feed) {
            let args = (response.jsonObject as? [String: Any])?["args"] as? [String: String] ?? [:]
            let source = response.isDataFromCache ? "cache  " : "network"
            print("  \(source) → feed of \(args["account"] ?? "?") (sent with token \(args["token"] ?? "?"))")
            shown.append(source)
        }
        print()
        guard shown.last == "network" else { throw ExampleFailure("the refresh did not reach the network") }
    }

    static func accountFolders() throws -> [String] {
        let accounts = NetworkConfig.shared.cacheDirectory.appendingPathComponent("accounts")
        return try FileManager.default.contentsOfDirectory(atPath: accounts.path).sorted()
    }
}

struct ExampleFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
