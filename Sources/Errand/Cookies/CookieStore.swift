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
    }

    /// The most cookies of one domain: past it, §5.7's eviction removes ``domainPurge`` of them.
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
    /// Secure cookies by name: a plain-http response may not shadow one (§5.7, step 16).
    private var secureNames: [String: Int] = [:]

    /// Stores `cookie`, replacing one of the same name, domain, host-only flag and path, whose
    /// creation time it keeps; `fromSecureOrigin` says whether it came over a secure connection.
    /// Returns whether the store changed.
    @discardableResult
    mutating func insert(_ cookie: Cookie, fromSecureOrigin: Bool, now: Date) -> Bool {
        var cookie = cookie
        if !cookie.isSecure && !fromSecureOrigin && shadowsSecureCookie(cookie) { return false }
        var list = entries[cookie.domain] ?? []
        var sequence = nextSequence
        if let index = list.firstIndex(where: {
            $0.cookie.name == cookie.name && $0.cookie.isHostOnly == cookie.isHostOnly && $0.cookie.path == cookie.path
        }) {
            cookie.createdAt = list[index].cookie.createdAt
            sequence = list[index].sequence
            forget(list.remove(at: index).cookie)
        } else {
            nextSequence += 1
        }
        guard !cookie.isExpired(at: now) else {
            entries[cookie.domain] = list.isEmpty ? nil : list
            return true
        }
        list.append(Entry(cookie: cookie, sequence: sequence, lastAccess: now))
        count += 1
        if cookie.isSecure { secureNames[cookie.name, default: 0] += 1 }
        if list.count > Self.domainLimit { evict(from: &list, now: now) }
        entries[cookie.domain] = list
        if count > Self.totalLimit { evictAcrossDomains(now: now) }
        return true
    }

    /// The cookies a request to `host` and `path` carries, in §5.8.3's order — longest path first,
    /// then oldest — marked accessed at `now`; expired ones met on the way are removed.
    mutating func cookies(host: String, path: Substring, isSecure: Bool, now: Date) -> [Cookie] {
        guard count > 0 else { return [] }
        var found: [Entry] = []
        var domain = Substring(host)
        while true {
            if let key = entries.index(forKey: String(domain)) {
                // In place: the dictionary's list is not copied to mark what a request takes.
                if Self.collect(
                    from: &entries.values[key], host: host, path: path, isSecure: isSecure, now: now, into: &found)
                {
                    var list = entries.values[key]
                    removeExpired(from: &list, now: now)
                    entries[String(domain)] = list.isEmpty ? nil : list
                }
            }
            guard let dot = domain.firstIndex(of: ".") else { break }
            domain = domain[domain.index(after: dot)...]
        }
        found.sort { first, second in
            let firstLength = first.cookie.path.utf8.count, secondLength = second.cookie.path.utf8.count
            if firstLength != secondLength { return firstLength > secondLength }
            if first.cookie.createdAt != second.cookie.createdAt {
                return first.cookie.createdAt < second.cookie.createdAt
            }
            return first.sequence < second.sequence
        }
        return found.map(\.cookie)
    }

    /// Adds to `found` the cookies of `list` a request carries, marked accessed; returns whether
    /// `list` holds an expired cookie.
    private static func collect(
        from list: inout [Entry], host: String, path: Substring, isSecure: Bool, now: Date, into found: inout [Entry]
    ) -> Bool {
        var hasExpired = false
        for index in list.indices {
            let cookie = list[index].cookie
            if cookie.isExpired(at: now) {
                hasExpired = true
            } else if cookie.matches(host: host), cookie.matches(path: path), isSecure || !cookie.isSecure {
                list[index].lastAccess = now
                found.append(list[index])
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

    /// Removes every cookie of `domain` and of the domains below it.
    mutating func removeCookies(forDomain domain: String) {
        for key in entries.keys where key == domain || key.hasSuffix("." + domain) {
            for entry in entries.removeValue(forKey: key) ?? [] { forget(entry.cookie) }
        }
    }

    /// Removes every cookie for which `shouldRemove` is true.
    mutating func removeAll(where shouldRemove: (Cookie) -> Bool) {
        for (key, list) in entries {
            let kept = list.filter { !shouldRemove($0.cookie) }
            guard kept.count != list.count else { continue }
            for entry in list where shouldRemove(entry.cookie) { forget(entry.cookie) }
            entries[key] = kept.isEmpty ? nil : kept
        }
    }

    /// Whether a secure cookie of `cookie`'s name lives where `cookie` would shadow it: a domain
    /// that domain-matches either way, and a path `cookie`'s path matches.
    private func shadowsSecureCookie(_ cookie: Cookie) -> Bool {
        guard secureNames[cookie.name, default: 0] > 0 else { return false }
        return entries.values.contains { list in
            list.contains { entry in
                entry.cookie.isSecure && entry.cookie.name == cookie.name
                    && (Cookie.domain(entry.cookie.domain, matches: cookie.domain)
                        || Cookie.domain(cookie.domain, matches: entry.cookie.domain))
                    && entry.cookie.matches(path: Substring(cookie.path))
            }
        }
    }

    /// Takes a removed cookie out of the counts.
    private mutating func forget(_ cookie: Cookie) {
        count -= 1
        if cookie.isSecure {
            secureNames[cookie.name, default: 1] -= 1
            if secureNames[cookie.name] == 0 { secureNames[cookie.name] = nil }
        }
    }

    private mutating func removeExpired(from list: inout [Entry], now: Date) {
        for entry in list where entry.cookie.isExpired(at: now) { forget(entry.cookie) }
        list.removeAll { $0.cookie.isExpired(at: now) }
    }

    /// §5.7's eviction for one domain: expired cookies first, then insecure ones, then any — the
    /// least recently used first — until ``domainPurge`` fewer than the limit remain.
    private mutating func evict(from list: inout [Entry], now: Date) {
        removeExpired(from: &list, now: now)
        let target = Self.domainLimit - Self.domainPurge
        guard list.count > target else { return }
        let victims = list.indices.sorted { first, second in
            let (a, b) = (list[first], list[second])
            if a.cookie.isSecure != b.cookie.isSecure { return !a.cookie.isSecure }
            return a.lastAccess < b.lastAccess
        }.prefix(list.count - target)
        for index in victims { forget(list[index].cookie) }
        let removed = Set(victims)
        list = list.indices.filter { !removed.contains($0) }.map { list[$0] }
    }

    /// §5.7's eviction across the jar: expired cookies, then the least recently used, until
    /// ``totalPurge`` fewer than the limit remain.
    private mutating func evictAcrossDomains(now: Date) {
        removeAll { $0.isExpired(at: now) }
        let target = Self.totalLimit - Self.totalPurge
        guard count > target else { return }
        var all = entries.values.flatMap { $0 }
        all.sort { $0.lastAccess != $1.lastAccess ? $0.lastAccess < $1.lastAccess : $0.sequence < $1.sequence }
        let victims = Set(all.prefix(count - target).map(\.sequence))
        for (key, list) in entries {
            let kept = list.filter { !victims.contains($0.sequence) }
            guard kept.count != list.count else { continue }
            for entry in list where victims.contains(entry.sequence) { forget(entry.cookie) }
            entries[key] = kept.isEmpty ? nil : kept
        }
    }
}
