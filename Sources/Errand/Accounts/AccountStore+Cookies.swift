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
        while true {
            let (opened, discards) = cookieJars.withLock { ($0.open[id], $0.discardsBegun) }
            if let opened { return opened }
            // Opened outside the lock: it reads a file. Two first uses may both open it; one is kept.
            let jar = try CookieJar(fileURL: cookieFileURL(for: id), keepsSessionCookies: keepsSessionCookies)
            let kept = cookieJars.withLock { jars -> CookieJar? in
                if let opened = jars.open[id] { return opened }
                // A sign-out began while the file was read: what was read may be cookies it deleted.
                guard jars.discardsBegun == discards, jars.discardsEnded == discards else { return nil }
                jars.open[id] = jar
                return jar
            }
            if let kept { return kept }
        }
    }

    /// The jar a request of `id` sends and stores cookies with, once it is adapted: the account's,
    /// or — for an account signed out since the request started — one in memory of the request's
    /// own, so that nothing it receives is kept for an account that is gone.
    func requestCookieJar(for id: String) throws(ErrandError) -> CookieJar {
        guard revisedCredential(for: id) != nil else { return CookieJar() }
        return try cookieJar(for: id)
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

    /// Empties `id`'s jar and deletes its file; a request still in flight stores nothing there,
    /// and a first use reading the file meanwhile reads it again.
    func discardCookies(of id: String) {
        let jar = cookieJars.withLock { jars in
            jars.discardsBegun += 1
            return jars.open.removeValue(forKey: id)
        }
        if let jar {
            jar.discard()
        } else {
            try? FileManager.default.removeItem(at: cookieFileURL(for: id))
        }
        cookieJars.withLock { $0.discardsEnded += 1 }
    }

    /// Where `id`'s cookies are saved: its name made path-safe, as its cache folder's is.
    private func cookieFileURL(for id: String) -> URL {
        fileURL.deletingLastPathComponent().appendingPathComponent("\(name).cookies", isDirectory: true)
            .appendingPathComponent(AccountCacheDirPathFilter.folderName(for: id) + ".json")
    }
}

/// An ``AccountStore``'s open cookie jars, and its sign-outs counted as they begin and end: a jar
/// whose file was read while one was under way is read again, as the sign-out may have deleted
/// what was read.
struct AccountCookieJars: Sendable {
    var open: [String: CookieJar] = [:]
    var discardsBegun = 0
    var discardsEnded = 0
}
