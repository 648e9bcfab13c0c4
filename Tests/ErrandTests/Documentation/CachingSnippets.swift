// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

private func show<T>(_ value: T, fromCache: Bool = false) {}

/// The code the articles "Caching responses" and "Offline" show, compiled (DocumentedCodeTests
/// checks each snippet is its article's).
enum CachingSnippets {
    // snippet: Caching.md
    struct FeedApi: BaseRequest {
        var url: String { "/feed" }
        var cacheTimeInSeconds: Int { 5 * CacheLifetime.minute }
    }
    // end snippet

    struct Feed: Decodable { let items: [String] }

    static func servedFromTheCache() async throws {
        // snippet: Caching.md
        let response = try await FeedApi().response()   // the network, then stored
        let again = try await FeedApi().response()      // from the cache: again.isDataFromCache
        // end snippet
        // snippet: Caching.md
        let agent = NetworkAgent.shared
        let fresh = try await agent.response(FeedApi(), ignoreCache: true)   // the network, then stored
        let task = agent.startWithoutCache(FeedApi(), success: { task in show(task.response) })
        // end snippet
        _ = (response, again, fresh, task)
    }

    static func loadingTheCache() throws {
        // snippet: Caching.md
        do {
            let stored = try NetworkAgent.shared.loadCache(FeedApi())   // never the network
            show(stored)
        } catch .cacheMiss(let reason) {
            print("not served from the cache: \(reason)")   // .expired, .versionMismatch, …
        } catch {
            print(error)
        }
        let lastKnown = try NetworkAgent.shared.loadCache(FeedApi(), allowingExpired: true)   // lastKnown.isStale
        // end snippet
        _ = lastKnown
    }

    static func revalidation() async throws {
        // snippet: Caching.md
        let response = try await FeedApi().response()
        if response.isRevalidated {
            // The body is the one stored; the server confirmed it. isDataFromCache is false.
        }
        // end snippet
    }

    // snippet: Caching.md
    struct ArticleApi: BaseRequest {
        let id: Int
        var url: String { "/articles/\(id)" }
        var followsHTTPCaching: Bool { true }   // fresh for as long as the server's max-age says
    }
    // end snippet

    struct SearchApi: BaseRequest {
        var url: String { "/search" }
        // snippet: Caching.md
        func cacheKeyArguments(_ arguments: [String: any Sendable]?) -> [String: any Sendable]? {
            arguments?.filter { $0.key != "token" }
        }
        // end snippet
    }

    static func cacheThenNetwork() async throws {
        // snippet: Caching.md
        for try await response in FeedApi().cacheThenNetwork() {
            show(try response.decode(Feed.self), fromCache: response.isDataFromCache)
        }
        // end snippet
        // snippet: Caching.md
        NetworkAgent.shared.startCacheThenNetwork(
            FeedApi(), success: { task in show(task.response, fromCache: task.isDataFromCache) },
            failure: { task in print(task.error?.description ?? "") })
        // end snippet
    }

    struct Token: AuthenticationCredential, Codable {
        var requiresRefresh: Bool { false }
    }

    static func managing(store: AccountStore<Token>, articleResponse: Response) async throws {
        // snippet: Caching.md
        NetworkConfig.shared.addCacheDirPathFilter(AccountCacheDirPathFilter(store: store))
        // end snippet
        // snippet: Caching.md
        try await NetworkAgent.shared.saveCache(articleResponse, for: ArticleApi(id: 7))
        try await NetworkAgent.shared.removeCache(ArticleApi(id: 8))
        await NetworkAgent.shared.clearCache()   // every entry, in every folder
        // end snippet
    }

    // snippet: Caching.md
    final class InMemoryCacheStorage: CacheStorage, @unchecked Sendable {  // `lock` guards `entries`.
        private let lock = NSLock()
        private var entries: [String: CachedEntry] = [:]

        func entry(for key: String) -> CachedEntry? { lock.withLock { entries[key] } }
        func store(_ entry: CachedEntry, for key: String) { lock.withLock { entries[key] = entry } }
        func removeEntry(for key: String) { lock.withLock { entries[key] = nil } }
        func removeAll(under folder: String) {
            lock.withLock { entries = folder.isEmpty ? [:] : entries.filter { !$0.key.hasPrefix(folder + "/") } }
        }
    }
    // end snippet

    struct CachedUUIDApi: BaseRequest {
        var url: String { "/uuid" }
        var cacheTimeInSeconds: Int { 60 }
    }

    static func storage() async {
        // snippet: Caching.md
        NetworkConfig.shared.cacheStorage = InMemoryCacheStorage()
        // end snippet
        // snippet: Caching.md
        // main.swift
        try? await NetworkAgent.shared.removeCache(CachedUUIDApi())
        await NetworkAgent.shared.waitForCacheWrites()
        // end snippet
    }

    static func blocking(articleResponse: Response, accountFolder: URL) throws {
        // snippet: Caching.md
        // A synchronous main, or a callback.
        try NetworkAgent.shared.saveCacheSync(articleResponse, for: ArticleApi(id: 7))
        try NetworkAgent.shared.removeCacheSync(ArticleApi(id: 8))
        NetworkAgent.shared.clearCacheSync(in: accountFolder)
        NetworkAgent.shared.waitForCacheWritesSync()
        // end snippet
    }
}
