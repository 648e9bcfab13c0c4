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
    /// so the query is split off by hand; so may be masked user information, or a secret
    /// scrubbed from the path); `nil` when it is not an absolute URL.
    init?(_ text: String) {
        let withoutFragment = text.prefix { $0 != "#" }
        let base = withoutFragment.prefix { $0 != "?" }
        guard
            let url = URL(string: String(base))
                ?? URL(string: base.replacingOccurrences(of: Redaction.placeholder, with: Self.encodedPlaceholder))
        else { return nil }
        self.init(url, query: withoutFragment.dropFirst(base.count + 1))
    }

    /// A request's URL; `nil` when it is not absolute.
    init?(_ url: URL) {
        self.init(url, query: url.query(percentEncoded: true).map { Substring($0) } ?? "")
    }

    /// Read from the parts `url` already parsed: a request's URL is not parsed again.
    private init?(_ url: URL, query: Substring) {
        guard let scheme = url.scheme?.lowercased(), let host = url.host(percentEncoded: true)?.lowercased() else {
            return nil
        }
        let port = url.port ?? Self.defaultPorts[scheme]
        authority = port.map { "\(host):\($0)" } ?? host
        let path = url.path(percentEncoded: false)
        location = "\(scheme)://\(authority)\(path.isEmpty ? "/" : path)"
        self.query = query.isEmpty ? [] : Redaction().formPairs(String(query), names: [])
    }

    /// Whether `actual`, a request's URL, is this recorded one; a placeholder in the recorded
    /// path (a secret scrubbed from it) stands for any text.
    func matches(_ actual: ReplayURL) -> Bool {
        (location == actual.location
            || (location.contains(ReplayWildcard.placeholder)
                && ReplayWildcard.text(location, matches: actual.location)))
            && ReplayWildcard.fields(query, match: actual.query)
    }

    private static let encodedPlaceholder =
        Redaction.placeholder.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""

    private static let defaultPorts = ["http": 80, "https": 443, "ws": 80, "wss": 443]
}
