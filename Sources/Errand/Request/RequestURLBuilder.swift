import Foundation

/// Resolves a request's `url` the way YTKNetwork's `buildRequestUrl` does.
package enum RequestURLBuilder {
    /// An absolute `url` wins as is. Otherwise the URL filters run in order, and the result is
    /// resolved against the base — the request's own, else the config's; the CDN's with `useCDN` —
    /// after ending the base's path with a `/`, so that `"users"` extends its path and `"/users"`
    /// starts from the host root; the base's query and fragment give way to the path's. `query`, when not empty, is added to the resolved URL's query.
    /// Without `applyingFilters` the URL filters are skipped, as for a cache key.
    package static func url(
        for request: any BaseRequest, config: NetworkConfig, query: String = "", applyingFilters: Bool = true
    ) throws(ErrandError) -> URL {
        let string = appending(
            query, to: try urlString(for: request, config: config, applyingFilters: applyingFilters))
        guard let url = URL(string: string), isAbsolute(url) else { throw .invalidURL(string) }
        return url
    }

    /// The base `url` resolves against: the request's own, else the config's; the CDN's with `useCDN`.
    static func baseURLString(for request: any BaseRequest, config: NetworkConfig) -> String {
        if request.useCDN {
            return request.cdnUrl.isEmpty ? config.cdnUrl : request.cdnUrl
        }
        return request.baseUrl.isEmpty ? config.baseUrl : request.baseUrl
    }

    /// The resolved URL as text. Parsing a URL costs microseconds, so the usual shapes — an
    /// absolute `url`, or a plain path under a plain base — are joined as text and parsed once,
    /// by the caller; anything else is left to Foundation's RFC 3986 resolution.
    private static func urlString(for request: any BaseRequest, config: NetworkConfig, applyingFilters: Bool)
        throws(ErrandError) -> String
    {
        let url = request.url
        if hasAuthority(url) { return encodingInvalidCharacters(url) }
        if url.utf8.contains(UInt8(ascii: ":")), let parsed = URL(string: url), isAbsolute(parsed) {
            return encodingInvalidCharacters(url)
        }
        let filters = applyingFilters ? config.urlFilters : []
        let filtered = filters.reduce(request.url) { $1.filterUrl($0, request: request) }
        let path = encodingInvalidCharacters(filtered)
        let base = encodingInvalidCharacters(baseURLString(for: request, config: config))
        if let joined = joined(base, path) { return joined }
        let baseURL = URL(string: endingPathWithSlash(base))
        guard let resolved = URL(string: path, relativeTo: baseURL)?.absoluteURL, isAbsolute(resolved) else {
            throw .invalidURL(base.isEmpty ? path : "\(base) + \(path)")
        }
        return resolved.absoluteString
    }

    /// `path` resolved against `base` as text, when both are plain: a base with a scheme and an
    /// authority and no `.` or `..` segment in its path; a path with no scheme, no `.` or `..`
    /// segment, and not starting with `//`, `?` or `#`. `nil` otherwise. The base's query and
    /// fragment give way to the path's, as RFC 3986 says; an empty path keeps the base's query.
    private static func joined(_ base: String, _ path: String) -> String? {
        guard hasAuthority(base), isPlainPath(path) else { return nil }
        let utf8 = base.utf8
        let pathEnd = utf8.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? utf8.endIndex
        guard path.utf8.first == UInt8(ascii: "/") else {
            var directory = String(base[..<pathEnd])
            if directory.utf8.last != UInt8(ascii: "/") { directory += "/" }
            guard !path.isEmpty else {
                let fragmentStart = utf8.firstIndex(of: UInt8(ascii: "#")) ?? utf8.endIndex
                directory += base[pathEnd..<fragmentStart]
                return directory
            }
            // A `.` or `..` in the base's path is for RFC 3986 resolution to remove.
            guard let authority = authorityRange(of: base), isPlainPath(String(base[authority.upperBound..<pathEnd]))
            else { return nil }
            directory += path
            return directory
        }
        // From the host root: keep `scheme://authority`, drop the base's path.
        guard let authority = authorityRange(of: base) else { return nil }
        var root = String(base[..<authority.upperBound])
        root += path
        return root
    }

    /// `base` with a `/` ending its path, before any query or fragment, so that a relative path
    /// extends the base's path rather than replacing its last segment.
    private static func endingPathWithSlash(_ base: String) -> String {
        let utf8 = base.utf8
        let pathEnd = utf8.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? utf8.endIndex
        guard !base.isEmpty, utf8[..<pathEnd].last != UInt8(ascii: "/") else { return base }
        return base[..<pathEnd] + "/" + base[pathEnd...]
    }

    /// Whether `path` resolves by plain concatenation: one pass over its bytes, as it runs for
    /// every request.
    private static func isPlainPath(_ path: String) -> Bool {
        if path.utf8.starts(with: "//".utf8) { return false }
        var isFirstSegment = true
        var segmentLength = 0
        var segmentIsDots = true
        var endsInDotSegment: Bool { segmentIsDots && (1...2).contains(segmentLength) }
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "?"), UInt8(ascii: "#"):
                return !(isFirstSegment && segmentLength == 0) && !endsInDotSegment
            case UInt8(ascii: "/"):
                if endsInDotSegment { return false }
                (isFirstSegment, segmentLength, segmentIsDots) = (false, 0, true)
            case UInt8(ascii: ":") where isFirstSegment:
                return false
            default:
                segmentLength += 1
                segmentIsDots = segmentIsDots && byte == UInt8(ascii: ".")
            }
        }
        return !endsInDotSegment
    }

    /// Whether `string` starts with `scheme://` and a non-empty authority.
    private static func hasAuthority(_ string: String) -> Bool {
        authorityRange(of: string) != nil
    }

    /// Where the authority of `string` is, when it starts with `scheme://` and a non-empty authority.
    private static func authorityRange(of string: String) -> Range<String.Index>? {
        let utf8 = string.utf8
        guard let first = utf8.first, first.isASCIILetter else { return nil }
        var index = utf8.index(after: utf8.startIndex)
        while index != utf8.endIndex {
            let byte = utf8[index]
            if byte.isASCIILetter || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            {
                index = utf8.index(after: index)
                continue
            }
            guard byte == UInt8(ascii: ":"), utf8[index...].starts(with: "://".utf8) else { return nil }
            let start = utf8.index(index, offsetBy: 3)
            let end =
                utf8[start...].firstIndex {
                    $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
                } ?? utf8.endIndex
            return start < end ? start..<end : nil
        }
        return nil
    }

    /// `text` with every byte a URL may not hold where it stands percent-encoded, once: `%` only
    /// where it does not start an escape, `[` and `]` outside the authority, a second `#`.
    /// Foundation, given one such byte, encodes the whole string again, `%` included —
    /// `hd=[1]&%2Bfoo%2B` became `hd=%5B1%5D&%252Bfoo%252B`, and the server read the key `%2Bfoo%2B`.
    /// A text with nothing to encode is returned as it is, without copying.
    package static func encodingInvalidCharacters(_ text: String) -> String {
        let utf8 = text.utf8
        let authority = authorityRange(of: text)
        var hasFragment = false
        var encoded: [UInt8]?
        var index = utf8.startIndex
        while index != utf8.endIndex {
            let byte = utf8[index]
            let next = utf8.index(after: index)
            let isValid: Bool
            switch byte {
            case UInt8(ascii: "#"):
                isValid = !hasFragment
                hasFragment = true
            case UInt8(ascii: "["), UInt8(ascii: "]"):
                isValid = authority?.contains(index) == true
            case UInt8(ascii: "%"):
                let escape = utf8[next...].prefix(2)
                isValid = escape.count == 2 && escape.allSatisfy(\.isHexDigit)
            default:
                isValid = byte.isAllowedInURL
            }
            if !isValid, encoded == nil { encoded = Array(utf8[..<index]) }
            if isValid {
                encoded?.append(byte)
            } else {
                encoded?.append(contentsOf: [UInt8(ascii: "%"), .hexDigit(byte >> 4), .hexDigit(byte & 0xF)])
            }
            index = next
        }
        return encoded.map { String(decoding: $0, as: UTF8.self) } ?? text
    }

    /// `query` added to `url`'s query, before any fragment.
    private static func appending(_ query: String, to url: String) -> String {
        guard !query.isEmpty else { return url }
        let bytes = url.utf8
        let fragmentStart = bytes.firstIndex(of: UInt8(ascii: "#")) ?? bytes.endIndex
        let beforeFragment = bytes[..<fragmentStart]
        let separator: String
        if !beforeFragment.contains(UInt8(ascii: "?")) {
            separator = "?"
        } else {
            let last = beforeFragment.last
            separator = last == UInt8(ascii: "?") || last == UInt8(ascii: "&") ? "" : "&"
        }
        // Appending to a `String`, not a `Substring`, which would count its characters first.
        var result = String(url[..<fragmentStart])
        result += separator
        result += query
        result += url[fragmentStart...]
        return result
    }

    /// A URL with both a scheme and a host, so `httpEndpoint` or `localhost:8080` never count.
    private static func isAbsolute(_ url: URL) -> Bool {
        url.scheme != nil && !(url.host ?? "").isEmpty
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool {
        (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self)
    }

    fileprivate var isHexDigit: Bool {
        (0x30...0x39).contains(self) || (0x41...0x46).contains(self) || (0x61...0x66).contains(self)
    }

    /// Whether RFC 3986 allows the byte unescaped somewhere in a URL: unreserved, a delimiter
    /// but the ones judged by position (`#`, `[`, `]`) and `%`.
    fileprivate var isAllowedInURL: Bool {
        isASCIILetter || (0x30...0x39).contains(self) || Self.allowedPunctuation.contains(self)
    }

    private static let allowedPunctuation = Set("-._~:/?@!$&'()*+,;=".utf8)

    /// The uppercase hex digit of `value` (0–15), as RFC 3986 recommends for escapes.
    fileprivate static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? 0x30 + value : 0x41 + value - 10
    }
}
