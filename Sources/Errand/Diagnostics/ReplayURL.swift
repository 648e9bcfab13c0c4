import Foundation

/// A URL as ``ReplayMatching`` compares it: its location exactly, once normalised, and its
/// query's items in any order.
struct ReplayURL: Sendable {
    /// `scheme://host:port/path`: scheme and host lowercased, the default port written out, the
    /// path percent-decoded and `/` when empty.
    let location: String
    /// The host and port, for saying which hosts a recording holds.
    let authority: String
    /// The query's items, form-decoded, in the order written.
    let query: [(name: String, value: String)]

    /// The URL in `text`, as recorded (a masked query value is `<redacted>`, not percent-encoded,
    /// so the query is split by hand) or as sent; `nil` when it is not an absolute URL.
    init?(_ text: String) {
        let withoutFragment = text.prefix { $0 != "#" }
        let base = withoutFragment.prefix { $0 != "?" }
        guard let components = URLComponents(string: String(base)), let scheme = components.scheme?.lowercased(),
            let host = components.host?.lowercased()
        else { return nil }
        let port = components.port ?? Self.defaultPorts[scheme]
        authority = port.map { "\(host):\($0)" } ?? host
        let path = components.path.removingPercentEncoding ?? components.path
        location = "\(scheme)://\(authority)\(path.isEmpty ? "/" : path)"
        let queryText = withoutFragment.dropFirst(base.count + 1)
        query = queryText.isEmpty ? [] : Redaction().formPairs(String(queryText), names: [])
    }

    /// Whether `actual`, a request's URL, is this recorded one.
    func matches(_ actual: ReplayURL) -> Bool {
        location == actual.location && ReplayWildcard.fields(query, match: actual.query)
    }

    private static let defaultPorts = ["http": 80, "https": 443, "ws": 80, "wss": 443]
}
