import Foundation

/// Where an app's signed-in users live: each account's credential under its id, which one is
/// current, saved in a file only the user can read — the VK SDK's "storage that allows you to
/// work with many users".
///
/// ```swift
/// let store = try AccountStore<Token>()
/// NetworkConfig.shared.addInterceptor(AuthenticationInterceptor(authenticator: TokenAuthenticator(), store: store))
/// NetworkConfig.shared.addCacheDirPathFilter(AccountCacheDirPathFilter(store: store))
/// try store.signIn(annsToken, for: "ann")  // after a log-in: requests from now on are Ann's
/// try store.signIn(bobsToken, for: "bob")  // a second user signs in: from now on, Bob's
/// store.current = "ann"                    // switching back needs no credential
/// await store.signOut("ann")               // her credential, cookies, cached responses and requests go
/// ```
///
/// The file, `<directory>/<name>.accounts.json`, is replaced whole on every change, atomically
/// and owner-only (0600) from its first byte: a crash leaves the old file or the new one, and no
/// other user can read it even for a moment. Keep one instance per name in a process; a second
/// reads the file as it was when it was made and does not see the first's later changes.
///
/// With ``AuthenticationInterceptor/init(authenticator:store:)`` a request belongs to the
/// account that was current when it started — queued ones included — keeps that account's
/// credential after a switch, and carries the account's id in ``RequestTask/userInfo`` under
/// ``accountKey``, and sends and stores the account's own cookies (``cookieJar(for:)``), kept in
/// `<directory>/<name>.cookies/`. See <doc:Accounts> and <doc:CookiesAndSessions>.
public final class AccountStore<Credential: AuthenticationCredential & Codable>: Sendable {
    /// What the file holds, and the revision of each account's credential.
    private struct Contents: Sendable {
        var accounts: [(id: String, credential: Credential)] = []
        var current: String?
        /// Counts each account's saves in this process: a refresh starts only from the credential
        /// still current, and a new one clears a failed refresh.
        var revisions: [String: Int] = [:]
        var nextRevision = 1
    }

    /// The store's name: its file is `<name>.accounts.json`.
    public let name: String
    /// The file the accounts are kept in.
    public let fileURL: URL
    private let contents: Locked<Contents>
    /// Orders the writes, so that the file always ends with the last change; readers never wait on it.
    private let writing = NSLock()
    /// Whether each account's cookie jar saves session cookies too. Default `false`: they last
    /// as long as the process.
    public let keepsSessionCookies: Bool
    /// The accounts' cookie jars opened so far, by account id, and the sign-outs that deleted one.
    let cookieJars = Locked(AccountCookieJars())

    /// Opens the store `name` in `directory`, reading its file if there is one.
    ///
    /// - Parameters:
    ///   - name: Which store: an app may keep several (`"default"`).
    ///   - directory: Where its file lives; made when missing, owner-only. Default (`nil`): the
    ///     app's own folder in the user's application-support folder — on Linux `$XDG_DATA_HOME`,
    ///     else `~/.local/share` — named after the bundle identifier or the executable.
    ///   - keepsSessionCookies: Whether the accounts' jars save session cookies (those without
    ///     `Expires` or `Max-Age`) too, so a restart keeps them. Default `false`.
    /// - Throws: ``ErrandError/fileSystem(_:)`` when the folder cannot be made or the file exists
    ///   but cannot be read, ``ErrandError/decoding(_:)`` when it is not an account file; both
    ///   name it.
    public init(name: String = "default", directory: URL? = nil, keepsSessionCookies: Bool = false)
        throws(ErrandError)
    {
        self.name = name
        self.keepsSessionCookies = keepsSessionCookies
        let directory = directory ?? Self.defaultDirectory()
        fileURL = directory.appendingPathComponent("\(name).accounts.json")
        try OwnerOnlyFile.createDirectory(directory, subject: "account store")
        contents = Locked(try Self.read(fileURL))
    }

    /// The key of the account a request belongs to in ``RequestTask/userInfo``:
    /// `"Errand.account.<name>"`. Its value is the account id, a `String`, set when the request
    /// starts.
    public var accountKey: String { "Errand.account.\(name)" }

    /// The accounts' ids, in the order they were first saved.
    public var accounts: [String] {
        contents.withLock { $0.accounts.map(\.id) }
    }

    /// The account requests are made for; `nil` when none is signed in.
    ///
    /// Setting it to an id the store does not hold leaves it unchanged. The change is saved to the
    /// file; when that write fails, the store keeps it in memory and the next successful write saves it.
    public var current: String? {
        get { contents.withLock { $0.current } }
        set {
            try? change { contents in
                guard let newValue, contents.accounts.contains(where: { $0.id == newValue }) else { return }
                contents.current = newValue
            }
        }
    }

    /// The credential saved for `id`, or `nil` when the store holds no such account.
    public func credential(for id: String) -> Credential? {
        contents.withLock { contents in contents.accounts.first { $0.id == id }?.credential }
    }

    /// Signs `id` in: saves `credential` as its, adding the account when it is new, and makes
    /// it ``current`` — in one change to the file. Requests started from now on carry
    /// `credential`; those already started keep their account's. Call it after each log-in.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` when the file cannot be written; the store then
    ///   holds the credential and the current account in memory, as ``save(_:for:)`` does.
    public func signIn(_ credential: Credential, for id: String) throws(ErrandError) {
        try change { contents in
            Self.store(credential, for: id, in: &contents)
            contents.current = id
        }
    }

    /// Saves `credential` as `id`'s, adding the account when it is new; it becomes current only
    /// when no account is, so saving a second user's credential does not switch to them — for
    /// that, ``signIn(_:for:)``.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` when the file cannot be written. The store then
    ///   still holds the credential, in memory — a refreshed token must not be lost — and the
    ///   file keeps its last content until a later write succeeds.
    public func save(_ credential: Credential, for id: String) throws(ErrandError) {
        try change { contents in
            Self.store(credential, for: id, in: &contents)
            if contents.current == nil { contents.current = id }
        }
    }

    /// Puts `credential` in `contents` as `id`'s, a new revision of it.
    private static func store(_ credential: Credential, for id: String, in contents: inout Contents) {
        if let index = contents.accounts.firstIndex(where: { $0.id == id }) {
            contents.accounts[index].credential = credential
        } else {
            contents.accounts.append((id, credential))
        }
        contents.revisions[id] = contents.nextRevision
        contents.nextRevision += 1
    }

    /// Signs `id` out: removes its credential, cancels its requests in flight on `agent`, deletes
    /// its cookies, file and all, and its cached responses (the folder ``AccountCacheDirPathFilter`` gives it). When it
    /// was current, the first remaining account becomes current. A refresh of its credential
    /// under way is dropped when it ends.
    ///
    /// The account's requests are those it started (with ``AuthenticationInterceptor``) and those
    /// caching into its folder, which it finds wherever other filters put it (`v2/account-ann`);
    /// only Errand's entries there are deleted, and a request that was in flight stores nothing
    /// there afterwards. With a ``CacheStorage`` of the app's own, a folder other filters moved
    /// is found only when this process used it.
    ///
    /// When the file cannot be written, the account is gone from memory and the next successful
    /// write removes it from the file.
    public func signOut(_ id: String, agent: NetworkAgent = .shared) async {
        try? change { contents in
            contents.accounts.removeAll { $0.id == id }
            contents.revisions[id] = nil
            if contents.current == id { contents.current = contents.accounts.first?.id }
        }
        discardCookies(of: id)
        let tasks = agent.pipeline.scheduler.liveTasks
        let folders = agent.pipeline.cache.folders(
            named: AccountCacheDirPathFilter.folderName(for: id), inUse: tasks.compactMap(\.cacheFolder))
        for task in tasks {
            let cachesThere = task.cacheFolder.map { folder in
                folders.contains { CacheKey.path(folder.path, isUnder: $0.path) }
            }
            if task.userInfo[accountKey] as? String == id || cachesThere == true { task.cancel() }
        }
        for folder in folders { await agent.clearCache(in: folder) }
    }

    /// Signs every account out, as ``signOut(_:agent:)`` does each.
    public func signOutAll(agent: NetworkAgent = .shared) async {
        for id in accounts { await signOut(id, agent: agent) }
    }

    // MARK: Revisions

    /// `id`'s credential and the revision it was saved as; `nil` when the store holds no such account.
    func revisedCredential(for id: String) -> (credential: Credential, revision: Int)? {
        contents.withLock { contents in
            contents.accounts.first { $0.id == id }.map { ($0.credential, contents.revisions[id] ?? 0) }
        }
    }

    /// Saves `credential` as `id`'s when `id`'s credential is still of `revision`; `false` when
    /// it was signed out or saved anew meanwhile.
    func replace(_ id: String, revision: Int, with credential: Credential) -> Bool {
        var replaced = false
        try? change { contents in
            guard let index = contents.accounts.firstIndex(where: { $0.id == id }),
                (contents.revisions[id] ?? 0) == revision
            else { return }
            contents.accounts[index].credential = credential
            contents.revisions[id] = contents.nextRevision
            contents.nextRevision += 1
            replaced = true
        }
        return replaced
    }

    // MARK: The file

    /// Applies `body` to the contents and writes the result; writes are ordered, so that the file
    /// ends with the last change.
    private func change(_ body: (inout Contents) -> Void) throws(ErrandError) {
        writing.lock()
        defer { writing.unlock() }
        let (changed, data) = contents.withLock { contents -> (Bool, Data?) in
            let before = (contents.accounts.map(\.id), contents.current, contents.nextRevision)
            body(&contents)
            let changed = before != (contents.accounts.map(\.id), contents.current, contents.nextRevision)
            return (changed, changed ? Self.encoded(contents) : nil)
        }
        guard changed else { return }
        guard let data else { throw .serialization("the credentials of \(fileURL.path) cannot be encoded") }
        try OwnerOnlyFile.write(data, to: fileURL, creatingDirectory: true, durable: true, subject: "account store")
    }

    /// The file's format.
    private struct File: Codable {
        struct Account: Codable {
            var id: String
            var credential: Credential
        }
        var version = 1
        var current: String?
        var accounts: [Account]
    }

    private static func encoded(_ contents: Contents) -> Data? {
        let accounts = contents.accounts.map { File.Account(id: $0.id, credential: $0.credential) }
        let file = File(current: contents.current, accounts: accounts)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return try? encoder.encode(file)
    }

    private static func read(_ url: URL) throws(ErrandError) -> Contents {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return Contents()
        } catch {
            throw .fileSystem("account store: cannot read \(url.path): \(error.localizedDescription)")
        }
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: data)
        } catch {
            throw .decoding("account store: \(url.path) is not an account file: \(error)")
        }
        var contents = Contents(accounts: file.accounts.map { ($0.id, $0.credential) })
        contents.current = file.current.flatMap { id in file.accounts.contains { $0.id == id } ? id : nil }
        for account in file.accounts {
            contents.revisions[account.id] = contents.nextRevision
            contents.nextRevision += 1
        }
        return contents
    }

    /// The application-support folder of this app, as ``init(name:directory:)`` describes.
    private static func defaultDirectory() -> URL {
        let app = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        #if os(Linux)
            let environment = ProcessInfo.processInfo.environment
            let base =
                environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? URL(fileURLWithPath: $0) : nil }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        #else
            let base =
                FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
                ?? FileManager.default.homeDirectoryForCurrentUser
        #endif
        return base.appendingPathComponent(app, isDirectory: true)
    }
}
