import Foundation

/// An expired entry that a caching request asks the server about instead of downloading it
/// again: the request carries the entry's validator, and a `304 Not Modified` answer becomes
/// the stored response with the 304's fields merged in.
struct Revalidation: Sendable {
    /// The expired entry, as it would be served.
    let stored: Response
    /// What the request adds: `If-None-Match` with the entry's `ETag`, else `If-Modified-Since`
    /// with its `Last-Modified`.
    let conditionalHeaders: [String: String]

    /// `nil` when `stored` has no validator, or when `requestHeaders` already hold a condition
    /// of the caller's own, which goes out untouched and whose `304` is the caller's answer.
    init?(stored: Response, requestHeaders: [String: String]) {
        guard requestHeaders.headerField("If-None-Match") == nil, requestHeaders.headerField("If-Modified-Since") == nil
        else { return nil }
        if let etag = stored.value(forHeader: "ETag") {
            conditionalHeaders = ["If-None-Match": etag]
        } else if let lastModified = stored.value(forHeader: "Last-Modified") {
            conditionalHeaders = ["If-Modified-Since": lastModified]
        } else {
            return nil
        }
        self.stored = stored
    }

    /// The request's answer for `notModified`: the stored status and body, with each field of
    /// the `304` replacing the stored one (RFC 9111 §3.2) but those that describe the stored
    /// body's framing or only the connection the `304` came on.
    func refreshed(by notModified: Response) -> Response {
        Self.merged(stored, with: notModified)
    }

    /// `stored` with the fields of `update` — a `304`, or a `200` to a `HEAD` — replacing its own,
    /// but those that describe the stored body's framing or only the connection `update` came on.
    static func merged(_ stored: Response, with update: Response) -> Response {
        let connectionOptions = CacheEntry.connectionOptions(in: update.headers)
        // The stored response's age, its own or the cache's, ends here: the 304 says the new one.
        var headers = stored.headers.filter { !$0.key.equalsIgnoringASCIICase("Age") }
        for (name, value) in update.headers {
            let lowercased = name.lowercased()
            guard !framingFields.contains(lowercased), !CacheEntry.hopByHopFields.contains(lowercased),
                !connectionOptions.contains(lowercased)
            else { continue }
            headers.setHeaderField(name, value)
        }
        return Response(
            statusCode: stored.statusCode, headers: headers, data: stored.data, isRevalidated: true, age: 0)
    }

    /// Whether a `200` to a `HEAD` describes the same body as `stored`, so that it may freshen
    /// it (RFC 9111 §4.3.5): each of its validators and its `Content-Length`, when it sends them, agree.
    static func describesSameBody(_ head: Response, as stored: Response) -> Bool {
        ["ETag", "Last-Modified", "Content-Length"].allSatisfy { field in
            guard let value = head.value(forHeader: field) else { return true }
            let storedValue =
                stored.value(forHeader: field) ?? (field == "Content-Length" ? String(stored.data.count) : nil)
            return value.trimmed == storedValue?.trimmed
        }
    }

    /// Fields of a `304` that would misdescribe the stored body.
    private static let framingFields: Set<String> = ["content-length", "content-encoding", "content-range"]
}
