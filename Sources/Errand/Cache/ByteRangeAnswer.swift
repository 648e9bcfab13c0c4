import Foundation

/// A request for one byte range (RFC 9110 §14.2) answered from a whole stored response: the
/// range as a `206 Partial Content`, as the server would have answered it.
package enum ByteRangeAnswer {
    /// `stored` narrowed to the one range `requestHeaders`' `Range` asks for, with its
    /// `Content-Range`; `stored` itself — which answers a range request as correctly, whole —
    /// for a request without `Range`, with several ranges or one the body cannot satisfy, with
    /// an `If-Range` that does not match it (§13.1.5), or for a stored status other than `200`.
    package static func answer(_ requestHeaders: [String: String], from stored: Response) -> Response {
        guard stored.statusCode == 200, let field = requestHeaders.headerField("Range"),
            ifRangeMatches(requestHeaders.headerField("If-Range"), stored),
            let range = range(field, length: stored.data.count)
        else { return stored }
        var headers = stored.headers
        let contentRange = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(stored.data.count)"
        headers.setHeaderField("Content-Range", contentRange)
        headers.setHeaderField("Content-Length", String(range.count))
        // The body may be a slice of a larger buffer, whose indices start where the slice does.
        let start = stored.data.startIndex
        return Response(
            statusCode: 206, headers: headers,
            data: Data(stored.data[start + range.lowerBound..<start + range.upperBound]),
            isDataFromCache: true, isStale: stored.isStale, age: stored.age)
    }

    /// The bytes one `bytes=first-last`, `bytes=first-` or `bytes=-suffix` selects of a body of
    /// `length`, clipped to it; `nil` for anything else, or a range that selects nothing.
    package static func range(_ field: String, length: Int) -> Range<Int>? {
        let value = field.trimmed
        guard value.lowercased().hasPrefix("bytes="), !value.contains(",") else { return nil }
        let spec = value.dropFirst("bytes=".count).trimmed
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        let first = String(spec[..<dash])
        let last = String(spec[spec.index(after: dash)...])
        guard isDigits(first), isDigits(last) else { return nil }
        if first.isEmpty {
            // A suffix longer than Int can hold asks for the whole body, as a longer one than it has.
            let suffix = Int(last) ?? .max
            guard !last.isEmpty, suffix > 0, length > 0 else { return nil }
            return max(0, length - suffix)..<length
        }
        guard let start = Int(first), start < length else { return nil }
        guard !last.isEmpty else { return start..<length }
        let end = Int(last) ?? .max
        guard end >= start else { return nil }
        return start..<(min(end, length - 1) + 1)
    }

    private static func isDigits(_ text: String) -> Bool {
        text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// Whether an `If-Range` lets the range be served from `stored`: absent, or the stored
    /// strong `ETag`, or its `Last-Modified` exactly.
    private static func ifRangeMatches(_ ifRange: String?, _ stored: Response) -> Bool {
        guard let ifRange = ifRange?.trimmed else { return true }
        if ifRange.hasPrefix("\"") || ifRange.hasPrefix("W/") {
            return !ifRange.hasPrefix("W/") && stored.value(forHeader: "ETag")?.trimmed == ifRange
        }
        return stored.value(forHeader: "Last-Modified")?.trimmed == ifRange
    }
}
