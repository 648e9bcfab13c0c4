import Foundation

/// A cookie as a ``CookieJar`` keeps it: RFC 6265bis §5.7's storage model.
///
/// Cookies come from servers' `Set-Cookie` fields; an app rarely makes one, but may to carry a
/// session over from elsewhere (``CookieJar/add(_:)``).
public struct Cookie: Sendable, Hashable, Codable {
    /// How a cookie is sent with cross-site requests (RFC 6265bis §4.1.2.7). Errand records it:
    /// an app's requests have no "site" of their own, so every request is same-site and the
    /// value changes nothing Errand sends.
    public enum SameSite: String, Sendable, Hashable, Codable {
        /// `SameSite=Strict`.
        case strict
        /// `SameSite=Lax`.
        case lax
        /// `SameSite=None`.
        case none
        /// No `SameSite` attribute, or one with an unknown value.
        case `default`
    }

    /// The name; may be empty, when the server sent a value without one.
    public var name: String
    /// The value, as the server sent it (quotes included).
    public var value: String
    /// The host (``isHostOnly``) or the domain whose hosts it goes to: lowercased, without a leading dot.
    public var domain: String
    /// Whether it goes only to ``domain`` itself, not to its subdomains: the server named no `Domain`.
    public var isHostOnly: Bool
    /// The path whose URLs it goes to, and those below it.
    public var path: String
    /// When it expires; `nil` for a session cookie, which lasts as long as the jar keeps it in memory.
    public var expiresAt: Date?
    /// Whether it goes only over secure connections (`https`, `wss`, and loopback hosts).
    public var isSecure: Bool
    /// Whether the server asked that scripts not see it. Errand sends it like any other.
    public var isHTTPOnly: Bool
    /// Its `SameSite` attribute. Default ``SameSite/default``.
    public var sameSite: SameSite
    /// When it was first stored; a newer cookie of the same name, domain and path keeps the old
    /// one's time. Cookies of equally long paths go out oldest first.
    public var createdAt: Date

    /// Creates a cookie.
    ///
    /// - Parameters:
    ///   - name: The name.
    ///   - value: The value, as it is sent.
    ///   - domain: Lowercased, without a leading dot.
    ///   - isHostOnly: Default `true`: sent to `domain` itself only.
    ///   - path: Default `"/"`: every path.
    ///   - expiresAt: Default `nil`: a session cookie.
    ///   - isSecure: Default `false`: sent over plain `http` too.
    ///   - isHTTPOnly: Default `false`.
    ///   - sameSite: Default ``SameSite/default``.
    ///   - createdAt: Default: now.
    public init(
        name: String, value: String, domain: String, isHostOnly: Bool = true, path: String = "/",
        expiresAt: Date? = nil, isSecure: Bool = false, isHTTPOnly: Bool = false, sameSite: SameSite = .default,
        createdAt: Date = Date()
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.isHostOnly = isHostOnly
        self.path = path
        self.expiresAt = expiresAt
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.sameSite = sameSite
        self.createdAt = createdAt
    }

    /// Whether it lasts past the process: it has an expiry.
    public var isPersistent: Bool { expiresAt != nil }

    /// Whether it has expired at `now`.
    func isExpired(at now: Date) -> Bool {
        expiresAt.map { $0 <= now } ?? false
    }

    /// Whether it goes to `host` (canonical: lowercased) — RFC 6265bis §5.8.3, step 1.
    func matches(host: String) -> Bool {
        isHostOnly ? host == domain : Self.domain(host, matches: domain)
    }

    /// Whether it goes to `requestPath` — RFC 6265bis §5.1.4's path-match.
    func matches(path requestPath: String) -> Bool {
        // Bytes, not characters: paths compare as sent, and a `Character` comparison costs more.
        var requestPath = requestPath, path = path
        return requestPath.withUTF8 { request in
            path.withUTF8 { path in
                guard request.starts(with: path) else {
                    return false
                }
                return request.count == path.count || path.last == UInt8(ascii: "/")
                    || request[path.count] == UInt8(ascii: "/")
            }
        }
    }

    /// Whether `host` domain-matches `domain` (RFC 6265bis §5.1.3): it is the domain or a name
    /// below it, and not an IP address.
    static func domain(_ host: String, matches domain: String) -> Bool {
        let hostBytes = host.utf8, domainBytes = domain.utf8
        guard hostBytes.count >= domainBytes.count, hostBytes.reversed().starts(with: domainBytes.reversed()) else {
            return false
        }
        if hostBytes.count == domainBytes.count { return true }
        return hostBytes.dropLast(domainBytes.count).last == UInt8(ascii: ".") && !isIPAddress(host)
    }

    /// Whether `host` is an IPv4 or IPv6 address rather than a name.
    static func isIPAddress(_ host: String) -> Bool {
        if host.contains(":") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { part in
                !part.isEmpty && part.utf8.count <= 3 && part.utf8.allSatisfy { (0x30...0x39).contains($0) }
            }
    }
}
