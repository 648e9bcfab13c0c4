import Foundation

/// Errand's cookie store, to RFC 6265bis: what servers set with `Set-Cookie`, sent back with
/// the requests they belong to.
///
/// Both transports store each response's cookies — every redirect hop's, by that hop's URL —
/// and send the jar's cookies for each request's URL, WebSocket and stream handshakes included.
/// Each ``NetworkConfig`` has a jar of its own (``NetworkConfig/cookieJar``); an
/// ``AccountStore`` keeps one per account (``AccountStore/cookieJar(for:)``).
///
/// What the jar does, as the draft has it: one cookie per `Set-Cookie` field, never split at
/// commas (§5.6) — but for the fields URLSession joined with commas, which ``URLSessionTransport``
/// splits at each comma a `name=` follows; `Expires` read by §5.1.1's date algorithm, `Max-Age`
/// over it, neither past 400 days; `Domain` matched, and refused when it names a public suffix (the list libpsl loads on
/// Linux; on Apple platforms only single-label names, such as `com`, are refused); host-only
/// cookies; `Path` matching; `Secure` cookies set and sent only over `https`, `wss` and loopback
/// hosts, and never shadowed from plain `http`; the `__Secure-` and `__Host-` prefixes; cookies
/// sent longest path first, then oldest (§5.8.3); at most 180 per site (the registrable domain
/// where libpsl is loaded, else each domain) and 3,300 in all, the least recently used insecure
/// ones going first (§5.7, §6.1). `HttpOnly` and `SameSite` are recorded: an app's requests are
/// neither scripts nor cross-site; `SameSite=None` without `Secure` is ignored (§5.7).
///
/// A jar made with ``init(fileURL:keepsSessionCookies:)`` keeps its cookies in a file,
/// owner-only and replaced whole on each change, so a crash leaves the old file or the new one.
public final class CookieJar: Sendable {
    /// The file the jar is saved in; `nil` for a jar in memory.
    public let fileURL: URL?
    /// Whether the file keeps session cookies (those without `Expires` or `Max-Age`) too. Default
    /// `false`: they last only as long as the process, as a browser's do.
    public let keepsSessionCookies: Bool
    private let store: Locked<CookieStore>
    private let file: CookieJarFile?

    /// Creates an empty jar in memory.
    public init() {
        fileURL = nil
        keepsSessionCookies = false
        store = Locked(CookieStore())
        file = nil
    }

    /// Opens the jar saved in `fileURL`, made when the first cookie that lasts is stored.
    ///
    /// - Parameters:
    ///   - fileURL: The jar's file; its folder is made when missing, owner-only.
    ///   - keepsSessionCookies: Whether session cookies are saved too. Default `false`.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when the file exists but cannot be read,
    ///   ``ErrandError/decoding(_:)`` when it is not a cookie jar; both name it.
    public init(fileURL: URL, keepsSessionCookies: Bool = false) throws(ErrandError) {
        self.fileURL = fileURL
        self.keepsSessionCookies = keepsSessionCookies
        let file = CookieJarFile(url: fileURL, keepsSessionCookies: keepsSessionCookies)
        var store = CookieStore()
        let now = Date()
        // The file is read as ``add(_:)`` takes a cookie: one edited by hand, or by anything else
        // that can write it, cannot end the `Cookie` field and start another.
        for cookie in try file.read() {
            guard let cookie = Self.storable(cookie) else { continue }
            store.insert(cookie, fromSecureOrigin: true, now: now)
        }
        self.store = Locked(store)
        self.file = file
    }

    /// The cookies a request to `url` carries, in the order they are sent.
    public func cookies(for url: URL) -> [Cookie] {
        guard let target = CookieTarget(url) else { return [] }
        return store.withLock {
            $0.cookies(host: target.host, path: target.path, isSecure: target.isSecure, now: Date())
        }
    }

    /// Every cookie the jar holds that has not expired.
    public var allCookies: [Cookie] {
        store.withLock { $0.allCookies(now: Date()) }
    }

    /// Whether the jar holds no cookie.
    public var isEmpty: Bool {
        store.withLock { $0.count == 0 }
    }

    /// Stores the cookies of `setCookieFields` — each one `Set-Cookie` value — as a response from
    /// `url` sets them. Fields the draft ignores are ignored.
    public func storeCookies(fromSetCookieFields setCookieFields: [String], for url: URL) {
        guard !setCookieFields.isEmpty, let target = CookieTarget(url) else { return }
        let now = Date()
        let cookies = setCookieFields.compactMap { field in
            SetCookie(field, requestPath: target.path, now: now).flatMap { target.cookie(from: $0, now: now) }
        }
        guard !cookies.isEmpty else { return }
        change { store in
            cookies.reduce(false) { changed, cookie in
                store.insert(cookie, fromSecureOrigin: target.isSecure, now: now) || changed
            }
        }
    }

    /// Adds `cookie`, replacing one of the same name, domain and path; an expired one removes it.
    /// Its domain is lowercased and loses a leading dot; a path that does not begin with `/` is `/`.
    /// A cookie whose name, value, domain or path holds a control character other than a tab is
    /// not added: it would end the `Cookie` field and start another.
    public func add(_ cookie: Cookie) {
        guard let cookie = Self.storable(cookie) else { return }
        change { store in store.insert(cookie, fromSecureOrigin: true, now: Date()) }
    }

    /// `cookie` as the jar keeps one it did not read from a `Set-Cookie` field: its domain
    /// lowercased without a leading dot, a path that does not begin with `/` made `/`; `nil`
    /// when its name, value, domain or path holds a control character other than a tab.
    private static func storable(_ cookie: Cookie) -> Cookie? {
        let fields = [cookie.name, cookie.value, cookie.domain, cookie.path]
        guard !fields.contains(where: { $0.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F } }) else {
            return nil
        }
        var cookie = cookie
        cookie.domain = cookie.domain.lowercased()
        if cookie.domain.hasPrefix(".") { cookie.domain.removeFirst() }
        if !cookie.path.hasPrefix("/") { cookie.path = "/" }
        return cookie
    }

    /// Removes the cookies of `domain` and of the domains below it (`example.com` takes
    /// `api.example.com`'s too).
    public func removeCookies(forDomain domain: String) {
        let domain = domain.lowercased()
        change { store in
            let before = store.count
            store.removeCookies(forDomain: domain.hasPrefix(".") ? String(domain.dropFirst()) : domain)
            return store.count != before
        }
    }

    /// Removes every cookie, from the file too.
    public func removeAll() {
        change { store in
            let hadCookies = store.count > 0
            store.removeAll { _ in true }
            return hadCookies
        }
    }

    /// Removes every cookie and the file, and saves nothing from now on: the jar of an account
    /// that signed out, which a response still in flight may yet reach.
    func discard() {
        file?.retire()
        store.withLock { $0.removeAll { _ in true } }
    }

    /// The `Cookie` field's value a request to `url` sends — `name=value` pairs in
    /// ``cookies(for:)``'s order, `; ` between them — or `nil` when it sends none.
    public func cookieHeader(for url: URL) -> String? {
        guard let target = CookieTarget(url) else { return nil }
        return store.withLock {
            $0.header(host: target.host, path: target.path, isSecure: target.isSecure, now: Date())
        }
    }

    /// Applies `body`, and saves the jar when it changed: the file is written after the lock is
    /// let go, in the order of the changes.
    private func change(_ body: (inout CookieStore) -> Bool) {
        guard let file else {
            store.withLock { _ = body(&$0) }
            return
        }
        let snapshot = store.withLock { store -> (revision: Int, cookies: [Cookie])? in
            guard body(&store) else { return nil }
            store.revision += 1
            return (store.revision, store.cookiesInArrivalOrder(now: Date()))
        }
        if let snapshot { file.write(snapshot.cookies, revision: snapshot.revision) }
    }
}

extension CookieJar: Equatable {
    /// Whether `lhs` and `rhs` are the same jar: two jars holding the same cookies are not.
    public static func == (lhs: CookieJar, rhs: CookieJar) -> Bool { lhs === rhs }
}
