// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand

private func showBanner(_ text: String) {}

/// The code the article "Offline" shows, compiled (DocumentedCodeTests checks each snippet is the article's).
enum OfflineSnippets {
    struct FeedApi: BaseRequest {
        var url: String { "/feed" }
        var cacheTimeInSeconds: Int { 300 }
    }

    // snippet: Offline.md
    struct SavedArticlesApi: BaseRequest {
        var url: String { "/articles/saved" }
        var cacheTimeInSeconds: Int { CacheLifetime.week }
        var cachePolicy: CachePolicy { .cacheOnly }
    }
    // end snippet

    static func offline() async throws {
        // snippet: Offline.md
        NetworkConfig.shared.isOffline = true      // settable any time, from any thread

        let feed = try await FeedApi().response()  // the last feed, at once
        if feed.isStale { showBanner("Offline — showing what you saw last") }
        // end snippet
        // snippet: Offline.md
        let saved = try NetworkAgent.shared.loadCache(SavedArticlesApi(), allowingExpired: true)
        // end snippet
        _ = saved
    }
}
