import Errand
import Foundation

/// `Set-Cookie` fields from any bytes, stored by a jar as responses from URLs the input picks,
/// then read back for those URLs and others it picks. Besides no crash: what the jar keeps and
/// sends holds RFC 6265bis's invariants — no control character, name and value within 4,096
/// bytes, none expired or past 400 days, only cookies whose domain, path and `Secure` flag admit
/// the request, in §5.8.3's order.
enum SetCookieTarget {
    private static let hosts = [
        "example.org", "home.example.org", "sub.home.example.org", "org", "127.0.0.1", "localhost",
    ]
    private static let paths = ["", "/", "/foo", "/foo/", "/foo/bar", "/foobar", "/%66oo/bar"]
    private static let schemes = ["http", "https", "ws", "wss"]
    /// Every URL the hosts, paths and schemes make, parsed once: parsing them per input cost more
    /// than the jar did.
    private static let urls: [URL] = schemes.flatMap { scheme in
        hosts.flatMap { host in paths.compactMap { URL(string: "\(scheme)://\(host)\($0)") } }
    }

    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let jar = CookieJar()
        var visited: [URL] = []
        for _ in 0..<(1 + input.int(below: 4)) where !input.isAtEnd {
            let url = urls[input.int(below: urls.count)]
            visited.append(url)
            let fields = (0..<(1 + input.int(below: 3))).map { _ in input.string(upTo: 200) }
            jar.storeCookies(fromSetCookieFields: fields, for: url)
        }
        let now = Date()
        for cookie in jar.allCookies {
            require(cookie.name.utf8.count + cookie.value.utf8.count <= 4096, "an oversized cookie was kept")
            require(
                !(cookie.name + cookie.value).unicodeScalars.contains {
                    ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F
                },
                "a control character was kept: \(cookie)")
            require(!cookie.name.isEmpty, "a cookie without a name")
            require(
                cookie.domain == cookie.domain.lowercased() && !cookie.domain.hasPrefix("."), "domain \(cookie.domain)")
            require(cookie.path.utf8.first == UInt8(ascii: "/"), "path \(cookie.path)")
            require(cookie.expiresAt.map { $0 > now } ?? true, "an expired cookie was kept")
            require(
                cookie.expiresAt.map { $0.timeIntervalSince(now) <= 400 * 86_400 + 60 } ?? true,
                "a cookie outlives 400 days")
        }
        // The URLs the cookies came from and a few more the input picks, rather than all 168.
        for offset in 0..<8 { visited.append(urls[(input.int(below: urls.count) + offset * 21) % urls.count]) }
        for url in visited { check(jar.cookies(for: url), for: url) }
    }

    /// What a request to `url` is sent obeys §5.8.3.
    private static func check(_ cookies: [Cookie], for url: URL) {
        guard let host = url.host(percentEncoded: false)?.lowercased() else { return }
        // As the jar reads it: `%66` is `f` (RFC 3986 §6.2.2.2), the one escape the URLs here hold.
        let path = url.path(percentEncoded: true).replacingOccurrences(of: "%66", with: "f")
        let secure = ["https", "wss"].contains(url.scheme ?? "") || host == "localhost" || host == "127.0.0.1"
        for cookie in cookies {
            let domainMatches =
                cookie.isHostOnly ? host == cookie.domain : host == cookie.domain || host.hasSuffix("." + cookie.domain)
            require(domainMatches, "\(cookie) sent to \(host)")
            let requestPath = path.isEmpty ? "/" : path
            let pathMatches =
                requestPath == cookie.path
                || (requestPath.hasPrefix(cookie.path)
                    && (cookie.path.hasSuffix("/") || requestPath.dropFirst(cookie.path.count).hasPrefix("/")))
            require(pathMatches, "\(cookie) sent to path \(path)")
            require(!cookie.isSecure || secure, "a Secure cookie sent to \(url)")
        }
        for (first, second) in zip(cookies, cookies.dropFirst()) {
            require(
                first.path.utf8.count > second.path.utf8.count
                    || (first.path.utf8.count == second.path.utf8.count && first.createdAt <= second.createdAt),
                "out of order: \(first.name) before \(second.name)")
        }
    }
}
