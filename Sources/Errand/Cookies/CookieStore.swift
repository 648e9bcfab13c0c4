import Foundation

/// What a ``CookieJar`` holds, as RFC 6265bis §5.7 stores and §5.8.3 retrieves it; a value the
/// jar keeps under its lock.
///
/// Cookies are filed by their domain, so a request looks up only its host and the domains above
/// it, however many other sites' cookies the jar holds.
struct CookieStore: Sendable {
    /// A stored cookie and what eviction and ordering need besides.
    struct Entry: Sendable {
        var cookie: Cookie
        /// Orders cookies created at the same instant as they arrived (§5.8.3, step 2).
        var sequence: UInt64
        var lastAccess: Date
        /// The site the cookie's domain belongs to, which the limit per domain counts by.
        var site: String
    }

    /// The most cookies of one site — the registrable domain (`example.co.uk`) of the cookies'
    /// domains where the full public suffix list is loaded, else each domain itself: past it,
    /// §5.7's eviction removes ``domainPurge`` of them. Counting by site, as browsers do, keeps a
    /// host many labels deep from filling the jar with a full set per domain above it.
    static let domainLimit = 180
    static let domainPurge = 30
    /// The most cookies in all: past it, eviction removes ``totalPurge``.
    static let totalLimit = 3300
    static let totalPurge = 300

    private(set) var entries: [String: [Entry]] = [:]
    private(set) var count = 0
    /// Counts the changes a jar saved to a file has made, so that the file ends with the newest.
    var revision = 0
    private var nextSequence: UInt64 = 0
    /// How many secure cookies each domain holds, by name: a plain-http response may not shadow
    /// one (§5.7, step 16), and the check looks only at the domains that hold one of its name.
    private var secureDomains: [String: [String: Int]] = [:]
    /// How many cookies each site holds.
    private var siteCounts: [String: Int] = [:]

    /// Stores `cookie`, replacing one of the same name, domain, host-only flag and path, whose
    /// creation time it keeps; `fromSecureOrigin` says whether it came over a secure connection.
    /// Returns whether the store changed.
    @discardableResult
    mutating func insert(_ cookie: Cookie, fromSecureOrigin: Bool, now: Date) -> Bool {
        var cookie = cookie
        if !cookie.isSecure && !fromSecureOrigin && shadowsSecureCookie(cookie) { return false }
        // Out of the dictionary while it changes, so that appending does not copy it.
        var list = entries.removeValue(forKey: cookie.domain) ?? []
        // Every cookie of a domain has its site: the list's first tells it without a lookup.
        let site = list.first?.site ?? Self.site(of: cookie.domain)
        var sequence = nextSequence
        if let index = list.firstIndex(where: {
            // Bytes, as §5.7 compares them: `==` on strings would take `é` and `e\u{301}` for one name.
            $0.cookie.name.utf8.elementsEqual(cookie.name.utf8) && $0.cookie.isHostOnly == cookie.isHostOnly
                && $0.cookie.path.utf8.elementsEqual(cookie.path.utf8)
        }) {
            cookie.createdAt = list[index].cookie.createdAt
            sequence = list[index].sequence
            forget(list.remove(at: index))
        } else {
            nextSequence += 1
        }
        guard !cookie.isExpired(at: now) else {
            entries[cookie.domain] = list.isEmpty ? nil : list
            return true
        }
        list.append(Entry(cookie: cookie, sequence: sequence, lastAccess: now, site: site))
        count += 1
        siteCounts[site, default: 0] += 1
        if cookie.isSecure { secureDomains[cookie.name, default: [:]][cookie.domain, default: 0] += 1 }
        entries[cookie.domain] = list
        if siteCounts[site, default: 0] > Self.domainLimit { evict(site: site, now: now) }
        if count > Self.totalLimit { evictAcrossDomains(now: now) }
        return true
    }

    /// The registrable domain of `domain`: the shortest name ending it that is not a public
    /// suffix; `domain` itself for an IP address or without the full list.
    private static func site(of domain: String) -> String {
        let list = PublicSuffixList.system
        guard list.isComplete, !Cookie.isIPAddress(domain) else { return domain }
        var start = domain.utf8.endIndex
        while let dot = domain.utf8[..<start].lastIndex(of: UInt8(ascii: ".")) {
            let name = String(domain[domain.utf8.index(after: dot)...])
            if !list.isPublicSuffix(name) { return name }
            start = dot
        }
        return domain
    }

    /// Where a cookie a request carries lives, and what orders it.
    private struct Match {
        var list: Dictionary<String, [Entry]>.Index
        var position: Int
        var pathLength: Int
        var createdAt: Date
        var sequence: UInt64
        /// The cookie's name and value, for the header, which then copies nothing else.
        var name: String
        var value: String
    }

    /// The cookies a request to `host` and `path` carries, in §5.8.3's order — longest path first,
    /// then oldest — marked accessed at `now`; expired ones met on the way are removed.
    mutating func cookies(host: String, path: String, isSecure: Bool, now: Date) -> [Cookie] {
        withMatches(host: host, path: path, isSecure: isSecure, now: now) { store, matches in
            matches.map { store.entries.values[$0.list][$0.position].cookie }
        } ?? []
    }

    /// The `Cookie` value for a request to `host` and `path`, as ``cookies(host:path:isSecure:now:)``
    /// orders them; `nil` for none. Built from the store itself: no cookie is copied.
    mutating func header(host: String, path: String, isSecure: Bool, now: Date) -> String? {
        withMatches(host: host, path: path, isSecure: isSecure, now: now) { store, matches in
            // Bytes first, one string at the end: cheaper than growing a string piece by piece.
            var header: [UInt8] = []
            header.reserveCapacity(matches.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 3 })
            for match in matches {
                if !header.isEmpty {
                    header.append(UInt8(ascii: ";"))
                    header.append(UInt8(ascii: " "))
                }
                if !match.name.isEmpty {
                    header += match.name.utf8
                    header.append(UInt8(ascii: "="))
                }
                header += match.value.utf8
            }
            return String(decoding: header, as: UTF8.self)
        }
    }

    /// Finds, orders and marks the cookies a request carries, hands them to `body` while their
    /// places are valid, then removes the expired cookies it met; `nil` when there are none.
    private mutating func withMatches<Result>(
        host: String, path: String, isSecure: Bool, now: Date, _ body: (CookieStore, [Match]) -> Result
    ) -> Result? {
        guard count > 0 else { return nil }
        var matches: [Match] = []
        matches.reserveCapacity(16)
        var expiredKeys: [String] = []
        var start = host.utf8.startIndex
        while true {
            // Only the host and the domains above it: a byte walk, each key a small string.
            let key = String(host[start...])
            if let list = entries.index(forKey: key) {
                if Self.collect(
                    from: &entries.values[list], at: list, host: host, path: path, isSecure: isSecure, now: now,
                    into: &matches)
                {
                    expiredKeys.append(key)
                }
            }
            guard let dot = host.utf8[start...].firstIndex(of: UInt8(ascii: ".")) else { break }
            start = host.utf8.index(after: dot)
        }
        matches.sort { first, second in
            if first.pathLength != second.pathLength { return first.pathLength > second.pathLength }
            if first.createdAt != second.createdAt { return first.createdAt < second.createdAt }
            return first.sequence < second.sequence
        }
        let result = matches.isEmpty ? nil : body(self, matches)
        for key in expiredKeys {
            var list = entries[key] ?? []
            removeExpired(from: &list, now: now)
            entries[key] = list.isEmpty ? nil : list
        }
        return result
    }

    /// Adds to `matches` the cookies of `list` a request carries, marked accessed; returns whether
    /// `list` holds an expired cookie.
    private static func collect(
        from list: inout [Entry], at key: Dictionary<String, [Entry]>.Index, host: String, path: String,
        isSecure: Bool, now: Date, into matches: inout [Match]
    ) -> Bool {
        var hasExpired = false
        for index in list.indices {
            if list[index].cookie.isExpired(at: now) {
                hasExpired = true
            } else if list[index].cookie.matches(host: host), list[index].cookie.matches(path: path),
                isSecure || !list[index].cookie.isSecure
            {
                list[index].lastAccess = now
                matches.append(
                    Match(
                        list: key, position: index, pathLength: list[index].cookie.path.utf8.count,
                        createdAt: list[index].cookie.createdAt, sequence: list[index].sequence,
                        name: list[index].cookie.name, value: list[index].cookie.value))
            }
        }
        return hasExpired
    }

    /// Every cookie not expired at `now`, by domain, then as ``cookies(host:path:isSecure:now:)`` orders them.
    func allCookies(now: Date) -> [Cookie] {
        entries.keys.sorted().flatMap { key in
            (entries[key] ?? []).filter { !$0.cookie.isExpired(at: now) }.sorted { $0.sequence < $1.sequence }.map(
                \.cookie)
        }
    }

    /// Every cookie not expired at `now`, in the order they arrived: what a jar's file holds, so
    /// that the jar read back orders cookies of the same creation time as this one does.
    func cookiesInArrivalOrder(now: Date) -> [Cookie] {
        entries.values.flatMap { $0 }.filter { !$0.cookie.isExpired(at: now) }.sorted { $0.sequence < $1.sequence }
            .map(\.cookie)
    }

    /// Removes every cookie of `domain` and of the domains below it.
    mutating func removeCookies(forDomain domain: String) {
        for key in entries.keys where key == domain || key.hasSuffix("." + domain) {
            for entry in entries.removeValue(forKey: key) ?? [] { forget(entry) }
        }
    }

    /// Removes every cookie for which `shouldRemove` is true.
    mutating func removeAll(where shouldRemove: (Cookie) -> Bool) {
        removeAll(inKeys: Array(entries.keys)) { shouldRemove($0.cookie) }
    }

    /// Whether a secure cookie of `cookie`'s name lives where `cookie` would shadow it: a domain
    /// that domain-matches either way, and a path `cookie`'s path matches.
    private func shadowsSecureCookie(_ cookie: Cookie) -> Bool {
        guard let domains = secureDomains[cookie.name] else { return false }
        return domains.keys.contains { domain in
            (Cookie.domain(domain, matches: cookie.domain) || Cookie.domain(cookie.domain, matches: domain))
                && (entries[domain] ?? []).contains { entry in
                    entry.cookie.isSecure && entry.cookie.name.utf8.elementsEqual(cookie.name.utf8)
                        && entry.cookie.matches(path: cookie.path)
                }
        }
    }

    /// Takes a removed cookie out of the counts.
    private mutating func forget(_ entry: Entry) {
        let cookie = entry.cookie
        count -= 1
        siteCounts[entry.site, default: 1] -= 1
        if siteCounts[entry.site] == 0 { siteCounts[entry.site] = nil }
        if cookie.isSecure, var domains = secureDomains[cookie.name] {
            domains[cookie.domain, default: 1] -= 1
            if domains[cookie.domain] == 0 { domains[cookie.domain] = nil }
            secureDomains[cookie.name] = domains.isEmpty ? nil : domains
        }
    }

    private mutating func removeExpired(from list: inout [Entry], now: Date) {
        for entry in list where entry.cookie.isExpired(at: now) { forget(entry) }
        list.removeAll { $0.cookie.isExpired(at: now) }
    }

    /// §5.7's eviction for one site: expired cookies first, then insecure ones, then any — the
    /// least recently used first — until ``domainPurge`` fewer than the limit remain.
    private mutating func evict(site: String, now: Date) {
        // A site's cookies are filed under the site or a domain below it.
        let keys = entries.keys.filter { Cookie.domain($0, matches: site) }
        removeAll(inKeys: keys) { entry in entry.site == site && entry.cookie.isExpired(at: now) }
        evictLeastRecentlyUsed(inKeys: keys, to: Self.domainLimit - Self.domainPurge, count: siteCounts[site] ?? 0) {
            $0.site == site
        }
    }

    /// §5.7's eviction across the jar: expired cookies, then insecure ones, then any — the least
    /// recently used first — until ``totalPurge`` fewer than the limit remain.
    private mutating func evictAcrossDomains(now: Date) {
        removeAll { $0.isExpired(at: now) }
        evictLeastRecentlyUsed(inKeys: Array(entries.keys), to: Self.totalLimit - Self.totalPurge, count: count) { _ in
            true
        }
    }

    /// Removes the entries of `keys`' lists that `isCandidate` admits, insecure before secure and
    /// least recently used first, until `count` of them come down to `target`.
    private mutating func evictLeastRecentlyUsed(
        inKeys keys: [String], to target: Int, count: Int, where isCandidate: (Entry) -> Bool
    ) {
        guard count > target else { return }
        var candidates = keys.flatMap { (entries[$0] ?? []).filter(isCandidate) }
        candidates.sort { first, second in
            if first.cookie.isSecure != second.cookie.isSecure { return !first.cookie.isSecure }
            if first.lastAccess != second.lastAccess { return first.lastAccess < second.lastAccess }
            return first.sequence < second.sequence
        }
        let victims = Set(candidates.prefix(count - target).map(\.sequence))
        removeAll(inKeys: keys) { victims.contains($0.sequence) }
    }

    /// Removes the entries of `keys`' lists for which `shouldRemove` is true.
    private mutating func removeAll(inKeys keys: [String], where shouldRemove: (Entry) -> Bool) {
        for key in keys {
            guard let list = entries[key] else { continue }
            let kept = list.filter { !shouldRemove($0) }
            guard kept.count != list.count else { continue }
            for entry in list where shouldRemove(entry) { forget(entry) }
            entries[key] = kept.isEmpty ? nil : kept
        }
    }
}
