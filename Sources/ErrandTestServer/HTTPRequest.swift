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

    /// The target in origin-form, `/path?query`, still percent-encoded. An absolute-form target,
    /// which a client sends to a proxy (`http://host:port/path?query`), is routed by its path and
    /// query (RFC 9112 §3.2.2), an empty path being `/`; `*` stays as it is.
    var originFormTarget: Substring {
        let target = target[...]
        // Only a target that does not start with `/` can be absolute-form: an origin-form one may
        // carry `://` in its query, as `/redirect-to?url=http://example.com/` does.
        guard !target.hasPrefix("/"), let scheme = target.range(of: "://") else { return target }
        let authorityAndRest = target[scheme.upperBound...]
        guard let end = authorityAndRest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) else {
            return "/"
        }
        let rest = authorityAndRest[end...]
        return rest.hasPrefix("/") ? rest : Substring("/" + rest)
    }

    /// The path part of the target, still percent-encoded.
    var rawPath: Substring {
        originFormTarget.prefix { $0 != "?" && $0 != "#" }
    }

    /// The query string without the `?`, still percent-encoded; empty when there is none.
    var rawQuery: Substring {
        let target = originFormTarget
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
