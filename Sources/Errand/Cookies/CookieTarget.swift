import Foundation

/// A request's URL as cookies see it (RFC 6265bis): the canonical host, the path, and whether
/// the connection counts as secure.
struct CookieTarget: Sendable {
    /// The host, lowercased, without a trailing dot's meaning changed (`example.org.` stays a
    /// host of its own, as browsers keep it).
    let host: String
    /// The path as sent, but for percent-encoded unreserved characters (`%6F` for `o`), which
    /// RFC 3986 §6.2.2.2 makes the same path, as browsers canonicalize a URL before matching; a
    /// `Path` attribute is taken as it is written. `/` for none, which is what goes out.
    let path: String
    /// `https` and `wss`, and loopback hosts over any scheme: what the Secure Contexts rules
    /// the draft points to call potentially trustworthy.
    let isSecure: Bool

    /// The target of `url`; `nil` for a URL without a host, which no cookie belongs to.
    init?(_ url: URL) {
        guard var host = url.host(percentEncoded: false)?.lowercased(), !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        let path = url.path(percentEncoded: true)
        self.path = path.isEmpty ? "/" : Self.normalized(path)
        let scheme = url.scheme?.lowercased()
        isSecure = scheme == "https" || scheme == "wss" || Self.isLoopback(host)
    }

    /// The cookie RFC 6265bis §5.7 stores for `setCookie` received from this target at `now`;
    /// `nil` when the storage model ignores it.
    func cookie(from setCookie: SetCookie, now: Date) -> Cookie? {
        // Step 2: a cookie needs a name or a value.
        guard !setCookie.name.isEmpty || !setCookie.value.isEmpty else { return nil }
        var domain = setCookie.domain ?? ""
        // Step 8: a domain not in ASCII is not canonical, and would match nothing.
        guard domain.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        // Step 9: no cookie for a whole public suffix, but for the suffix's own host.
        if !domain.isEmpty, PublicSuffixList.system.isPublicSuffix(domain) {
            guard domain == host else { return nil }
            domain = ""
        }
        // Step 10: a Domain the host is not in is another site's.
        let isHostOnly = domain.isEmpty
        if !isHostOnly {
            guard Cookie.domain(host, matches: domain) else { return nil }
        }
        let cookie = Cookie(
            name: setCookie.name, value: setCookie.value, domain: isHostOnly ? host : domain, isHostOnly: isHostOnly,
            path: setCookie.path ?? String(SetCookie.defaultPath(of: path)), expiresAt: setCookie.expiresAt,
            isSecure: setCookie.isSecure, isHTTPOnly: setCookie.isHTTPOnly, sameSite: setCookie.sameSite,
            createdAt: now)
        // Step 13: a Secure cookie only from a secure origin.
        if cookie.isSecure && !isSecure { return nil }
        // Step 17: `SameSite=None` only with `Secure`.
        if cookie.sameSite == .none && !cookie.isSecure { return nil }
        guard Self.prefixesHold(for: cookie, hasPathAttribute: setCookie.path != nil) else { return nil }
        return cookie
    }

    /// Steps 20–22: `__Secure-` needs `Secure`; `__Host-` needs it too, no `Domain` and the path
    /// `/`; a nameless cookie may not look like either. Prefixes are matched in any case.
    private static func prefixesHold(for cookie: Cookie, hasPathAttribute: Bool) -> Bool {
        if hasPrefix("__secure-", cookie.name) && !cookie.isSecure { return false }
        if hasPrefix("__host-", cookie.name)
            && !(cookie.isSecure && cookie.isHostOnly && hasPathAttribute && cookie.path == "/")
        {
            return false
        }
        if cookie.name.isEmpty, hasPrefix("__secure-", cookie.value) || hasPrefix("__host-", cookie.value) {
            return false
        }
        return true
    }

    /// Whether `text` starts with the bytes of `prefix` in any ASCII case. Not `hasPrefix`: it
    /// compares characters, and a combining mark after the `-` would hide the prefix.
    private static func hasPrefix(_ prefix: StaticString, _ text: String) -> Bool {
        let prefix = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        return text.utf8.starts(with: prefix) { $0.asciiLowercased == $1 }
    }

    /// `path` with each `%XX` that encodes an unreserved character (letter, digit, `-._~`) decoded.
    static func normalized(_ path: String) -> String {
        guard path.utf8.contains(UInt8(ascii: "%")) else { return path }
        let bytes = Array(path.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
                let high = bytes[index + 1].hexDigitValue, let low = bytes[index + 2].hexDigitValue,
                isUnreserved(high << 4 | low)
            {
                result.append(high << 4 | low)
                index += 3
            } else {
                result.append(bytes[index])
                index += 1
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
            || byte == UInt8(ascii: "~")
    }

    /// Whether `host` is `localhost`, a name below it, or a loopback address.
    private static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host.hasSuffix(".localhost") || host == "::1"
            || host.hasPrefix("127.")
                && Cookie.isIPAddress(host)
    }
}
