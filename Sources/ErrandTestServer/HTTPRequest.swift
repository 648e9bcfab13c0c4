import Foundation

/// One complete request as read off the wire, before any routing.
struct HTTPRequest: Sendable {
    /// The method token exactly as sent (`GET`, `POST`, ...); methods are case-sensitive.
    var method: String
    /// The request-target as sent: `/path?query`, an absolute URL, or `*`.
    var target: String
    /// `HTTP/1.1` or `HTTP/1.0`.
    var version: String
    var headers: [HTTPHeader]
    /// The body with any chunked framing removed.
    var body: Data
    /// The peer's IPv4 address, e.g. `127.0.0.1`.
    var peerAddress: String

    /// The path part of the target, still percent-encoded.
    var rawPath: Substring {
        var path = target[...]
        // Absolute-form (`http://host/p`) is legal in HTTP/1.1; only the path matters here.
        if let scheme = path.range(of: "://") {
            let afterAuthority = path[scheme.upperBound...]
            path = afterAuthority.firstIndex(of: "/").map { afterAuthority[$0...] } ?? "/"
        }
        return path.prefix { $0 != "?" && $0 != "#" }
    }

    /// The query string without the `?`, still percent-encoded; empty when there is none.
    var rawQuery: Substring {
        guard let mark = target.firstIndex(of: "?") else { return "" }
        return target[target.index(after: mark)...].prefix { $0 != "#" }
    }

    /// The query parameters in order, decoded the way werkzeug decodes them.
    var queryItems: [(name: String, value: String)] {
        URLEncoding.parseForm(rawQuery)
    }

    /// Whether the client wants the connection kept open after this exchange.
    var wantsKeepAlive: Bool {
        if version == "HTTP/1.0" {
            return headers.contains(token: "keep-alive", in: "Connection")
        }
        return !headers.contains(token: "close", in: "Connection")
    }
}
