import Foundation

/// Resolves a request's `url` the way YTKNetwork's `buildRequestUrl` does.
enum RequestURLBuilder {
    /// An absolute `url` wins as is. Otherwise the URL filters run in order, and the result is
    /// resolved against the base — the request's own, else the config's; the CDN's with `useCDN` —
    /// after giving the base a trailing `/`, so that `"users"` extends its path and `"/users"`
    /// starts from the host root. `query`, when not empty, is added to the resolved URL's query.
    static func url(for request: any BaseRequest, config: NetworkConfig, query: String = "") throws(ErrandError)
        -> URL
    {
        let string = appending(query, to: try urlString(for: request, config: config))
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
    private static func urlString(for request: any BaseRequest, config: NetworkConfig) throws(ErrandError)
        -> String
    {
        if hasAuthority(request.url) { return request.url }
        if request.url.utf8.contains(UInt8(ascii: ":")), let url = URL(string: request.url), isAbsolute(url) {
            return request.url
        }
        let path = config.urlFilters.reduce(request.url) { $1.filterUrl($0, request: request) }
        let base = baseURLString(for: request, config: config)
        if let joined = joined(base, path) { return joined }
        let baseURL = URL(string: base.isEmpty || base.hasSuffix("/") ? base : base + "/")
        guard let resolved = URL(string: path, relativeTo: baseURL)?.absoluteURL, isAbsolute(resolved) else {
            throw .invalidURL(base.isEmpty ? path : "\(base) + \(path)")
        }
        return resolved.absoluteString
    }

    /// `path` resolved against `base` as text, when both are plain: a base with a scheme and an
    /// authority and no query or fragment; a path with no scheme, no `.` or `..` segment, and not
    /// starting with `//`, `?` or `#`. `nil` otherwise.
    private static func joined(_ base: String, _ path: String) -> String? {
        guard hasAuthority(base), isPlainPath(path),
            !base.utf8.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") })
        else { return nil }
        guard path.utf8.first == UInt8(ascii: "/") else {
            return base.utf8.last == UInt8(ascii: "/") ? base + path : base + "/" + path
        }
        // From the host root: keep `scheme://authority`, drop the base's path.
        guard let schemeEnd = base.utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let authority = base.utf8[schemeEnd...].dropFirst(3)
        let authorityEnd = authority.firstIndex(of: UInt8(ascii: "/")) ?? base.utf8.endIndex
        var root = String(base[..<authorityEnd])
        root += path
        return root
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
        var bytes = string.utf8.makeIterator()
        guard let first = bytes.next(), first.isASCIILetter else { return false }
        while let byte = bytes.next() {
            if byte.isASCIILetter || (0x30...0x39).contains(byte) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            {
                continue
            }
            guard byte == UInt8(ascii: ":"), bytes.next() == UInt8(ascii: "/"), bytes.next() == UInt8(ascii: "/"),
                let authorityStart = bytes.next()
            else { return false }
            return authorityStart != UInt8(ascii: "/") && authorityStart != UInt8(ascii: "?")
                && authorityStart != UInt8(ascii: "#")
        }
        return false
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
}
