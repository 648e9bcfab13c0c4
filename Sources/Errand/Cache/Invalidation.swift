import Foundation

/// Which stored responses an answer to an unsafe method makes wrong (RFC 9111 §4.4): a `POST`,
/// `PUT`, `DELETE` or `PATCH` that succeeded has likely changed what a `GET` of its URL returns.
enum Invalidation {
    /// The URIs whose entries go, after `method` to `targetURI` got `statusCode` with
    /// `responseHeaders`: none for a safe method or an error status; otherwise the target, and
    /// the `Location` and `Content-Location` the answer names when they share its origin — a
    /// server may not invalidate another origin's entries.
    static func uris(
        method: String, statusCode: Int, targetURI: URL, responseHeaders: [String: String]
    ) -> [URL] {
        guard !safeMethods.contains(method.uppercased()), (200..<400).contains(statusCode) else { return [] }
        let named = ["Location", "Content-Location"].compactMap { name in
            responseHeaders.headerField(name).flatMap { URL(string: $0.trimmed, relativeTo: targetURI)?.absoluteURL }
        }
        return [targetURI] + named.filter { isSameOrigin($0, targetURI) }
    }

    /// Methods that change nothing on the server (RFC 9110 §9.2.1); every other one, known or not, is unsafe.
    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    private static func isSameOrigin(_ url: URL, _ other: URL) -> Bool {
        url.scheme?.lowercased() == other.scheme?.lowercased() && url.host?.lowercased() == other.host?.lowercased()
            && effectivePort(url) == effectivePort(other)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? ["http": 80, "https": 443][url.scheme?.lowercased() ?? ""]
    }
}
