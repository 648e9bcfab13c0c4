import Foundation

extension AccountStore {
    /// The cookie jar of account `id`: its requests — those an ``AuthenticationInterceptor`` with
    /// this store binds to it, and the refreshes of its credential — send and store its cookies,
    /// never another account's or the configuration's. Saved in
    /// `<directory>/<name>.cookies/<id>.json`, owner-only; ``signOut(_:agent:)`` deletes it.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` or ``ErrandError/decoding(_:)`` when the jar's
    ///   file exists but cannot be read; a request of the account then fails with that error
    ///   rather than go out without the account's cookies.
    public func cookieJar(for id: String) throws(ErrandError) -> CookieJar {
        if let jar = cookieJars.withLock({ $0[id] }) { return jar }
        // Opened outside the lock: it reads a file. Two first uses may both open it; one is kept.
        let jar = try CookieJar(fileURL: cookieFileURL(for: id), keepsSessionCookies: keepsSessionCookies)
        return cookieJars.withLock { jars in
            if let opened = jars[id] { return opened }
            jars[id] = jar
            return jar
        }
    }

    /// Signs `id` in as ``signIn(_:for:)`` does, and moves the cookies of `jar` — the one the
    /// log-in's own requests stored into, usually the configuration's — to the account's jar:
    /// the session cookie a log-in form set is the account's from now on, and leaves `jar`.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` when the account file cannot be written (the store
    ///   then holds the credential in memory), or the account's cookie file cannot be read.
    public func signIn(_ credential: Credential, for id: String, movingCookiesFrom jar: CookieJar)
        throws(ErrandError)
    {
        let accountJar = try cookieJar(for: id)
        if accountJar !== jar {
            let cookies = jar.allCookies
            jar.removeAll()
            for cookie in cookies { accountJar.add(cookie) }
        }
        try signIn(credential, for: id)
    }

    /// Empties `id`'s jar and deletes its file; a request still in flight stores nothing there.
    func discardCookies(of id: String) {
        if let jar = cookieJars.withLock({ $0.removeValue(forKey: id) }) {
            jar.discard()
        } else {
            try? FileManager.default.removeItem(at: cookieFileURL(for: id))
        }
    }

    /// Where `id`'s cookies are saved: its name made path-safe, as its cache folder's is.
    private func cookieFileURL(for id: String) -> URL {
        fileURL.deletingLastPathComponent().appendingPathComponent("\(name).cookies", isDirectory: true)
            .appendingPathComponent(AccountCacheDirPathFilter.folderName(for: id) + ".json")
    }
}
