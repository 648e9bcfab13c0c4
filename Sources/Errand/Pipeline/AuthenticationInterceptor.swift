import Foundation

/// Authenticates requests with a credential that expires, refreshing it once for everyone.
///
/// ```swift
/// let auth = AuthenticationInterceptor(authenticator: TokenAuthenticator(), credential: savedToken)
/// NetworkConfig.shared.addInterceptor(auth)
/// ```
/// - Every attempt gets the current credential, so a retried request carries the refreshed one.
/// - One refresh at a time: requests that need the credential while it is refreshed wait for it,
///   and any number of concurrent authentication errors cause one ``Authenticator/refresh(_:)``.
/// - A request refused with an older credential than the current one is sent again with the
///   current one, without another refresh.
/// - When the refresh fails, every request waiting for it fails with its error, and so does every
///   later request that needs the credential, until ``credential`` is set again (after a new log-in).
/// - A request is sent again for authentication at most twice, so a server that refuses every
///   credential cannot cause endless refreshes.
/// - With an ``AccountStore`` (``init(authenticator:store:)``) the credential is the store's: each
///   request carries the credential of the account that was current when it started, and a
///   refreshed credential is saved back to that account — or dropped when the account was signed
///   out or saved anew meanwhile.
/// - Added to the configuration, only requests to the app's own API carry the credential: by
///   default those to the origin of the agent's ``NetworkConfig/baseUrl`` or
///   ``NetworkConfig/cdnUrl`` (``Authenticator/authenticates(_:apiOrigins:)`` widens it).
///   Interceptors and URL filters otherwise apply to every request of the agent, a request type
///   with its own `baseUrl` included: this one must not hand the app's token to a third party,
///   nor refresh it for a third party's `401`.
/// - Carried by a request itself (``BaseRequest/interceptors``), it authenticates that request,
///   at the origin the request goes to — with or without a `baseUrl` configured.
/// - With ``NetworkConfig/debugLogEnabled`` on, the log line of a request the scope kept the
///   credential from says so, and why.
/// - The header fields ``Authenticator/apply(_:to:)`` sets are credentials
///   (``TransportRequest/credentialHeaders``): a redirect to another origin drops them.
public final class AuthenticationInterceptor<A: Authenticator>: RequestInterceptor, RequestAccessory, Sendable {
    private struct State {
        /// The credential without a store, and its revision: counts changes, so that a refresh
        /// starts only from the one still current.
        var credential: A.Credential?
        var revision = 0
        /// The refresh under way, by account (`""` without a store).
        var refreshes: [String: (id: Int, task: Task<A.Credential, any Error>)] = [:]
        var refreshCount = 0
        /// Why an account's credential of a revision could not be refreshed; a new one clears it.
        var refreshFailures: [String: (revision: Int, error: ErrandError)] = [:]
    }

    /// An ``AccountStore`` of the authenticator's credential, reached without its `Codable` constraint.
    private struct Store: Sendable {
        let accountKey: String
        let current: @Sendable () -> String?
        let credential: @Sendable (String) -> (credential: A.Credential, revision: Int)?
        let save: @Sendable (A.Credential, String) throws(ErrandError) -> Void
        let replace: @Sendable (String, Int, A.Credential) -> Bool
        let cookieJar: @Sendable (String) throws(ErrandError) -> CookieJar
    }

    /// What a refused request does next, decided under the lock.
    private enum NextStep {
        case retry
        case wait(Task<A.Credential, any Error>)
        case fail(ErrandError)
        case doNotRetry
        /// The credential changed while the request compared it: compare again.
        case lookAgain
    }

    private let authenticator: A
    private let store: Store?
    private let state: Locked<State>

    /// Creates an interceptor; with a `nil` credential, requests go out unauthenticated until one is set.
    public init(authenticator: A, credential: A.Credential?) {
        self.authenticator = authenticator
        store = nil
        state = Locked(State(credential: credential))
    }

    /// Creates an interceptor whose credentials are `store`'s: a request carries the credential of
    /// the account current when it started, none when no account was.
    public init(authenticator: A, store: AccountStore<A.Credential>) where A.Credential: Codable {
        self.authenticator = authenticator
        self.store = Store(
            accountKey: store.accountKey, current: { store.current }, credential: { store.revisedCredential(for: $0) },
            save: { credential, id throws(ErrandError) in try store.save(credential, for: id) },
            replace: { store.replace($0, revision: $1, with: $2) },
            cookieJar: { id throws(ErrandError) in try store.requestCookieJar(for: id) })
        state = Locked(State())
    }

    /// The credential applied to requests; set it after a log-in, or `nil` after a log-out.
    ///
    /// With an ``AccountStore`` it is the current account's, and setting it saves it as that
    /// account's; with no current account, or to `nil`, setting does nothing (sign out through the store).
    public var credential: A.Credential? {
        get {
            guard let store else { return state[\.credential] }
            return store.current().flatMap { store.credential($0)?.credential }
        }
        set {
            guard let store else {
                return state.withLock { state in
                    state.credential = newValue
                    state.revision += 1
                }
            }
            guard let newValue, let account = store.current() else { return }
            try? store.save(newValue, account)
        }
    }

    /// Binds the request to the account current now, when there is a store.
    public func requestWillStart(_ task: RequestTask) {
        guard let store else { return }
        let account: (any Sendable)? = store.current()
        task.userInfo[store.accountKey] = account
    }

    /// Applies the current credential, after the refresh in progress or one it needs.
    public func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest
    {
        guard let account = account(of: task) else { return request }
        var request = request
        // The account's cookies go wherever its requests go, as a browser profile's do.
        if let store, request.cookieJar != nil { request.cookieJar = try store.cookieJar(account) }
        guard isInScope(request, of: task) else {
            noteWithheld(from: request, of: task, account: account)
            return request
        }
        guard let credential = try await usableCredential(of: account) else { return request }
        var adapted = request
        authenticator.apply(credential, to: &adapted)
        // What it set is the credential, whatever the fields are called.
        adapted.credentialHeaders.formUnion(adapted.headers.keys.filter { adapted.headers[$0] != request.headers[$0] })
        return adapted
    }

    /// ``RetryDecision/retry`` for an authentication error, once the credential was refreshed —
    /// or at once when the request was sent with an older credential than the current one.
    public func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision {
        guard authenticator.isAuthenticationError(error, response: task.response), task.attemptCount <= 2,
            let sent = task.sentRequest, isInScope(sent, of: task), let account = account(of: task)
        else { return .doNotRetry }
        while true {
            switch await nextStep(after: sent, of: account) {
            case .retry: return .retry
            case .doNotRetry: return .doNotRetry
            case .fail(let error): return .fail(error)
            case .lookAgain: continue
            case .wait(let refresh):
                do throws(ErrandError) {
                    _ = try await Self.value(of: refresh)
                    return .retry
                } catch {
                    return .fail(error)
                }
            }
        }
    }

    /// The account `task` belongs to: `""` without a store; with one, the account current when
    /// it started, `nil` when none was.
    private func account(of task: RequestTask) -> String? {
        guard let store else { return "" }
        return task.userInfo[store.accountKey] as? String
    }

    /// `account`'s credential and its revision; read under the state lock where it must not change.
    private func current(_ account: String, in state: State) -> (credential: A.Credential?, revision: Int) {
        guard let store else { return (state.credential, state.revision) }
        return store.credential(account).map { ($0.credential, $0.revision) } ?? (nil, -1)
    }

    /// Whether `request` of `task` may carry the credential, by the authenticator's scope.
    private func isInScope(_ request: TransportRequest, of task: RequestTask) -> Bool {
        authenticator.authenticates(request, apiOrigins: apiOrigins(of: task, sending: request))
    }

    /// The origins the credential belongs to: the request's own when the request carries this
    /// interceptor itself, else those of the configuration's base and CDN URLs.
    private func apiOrigins(of task: RequestTask, sending request: TransportRequest) -> [URL] {
        guard !InterceptorScope.isRequestsOwn else { return [task.builtRequest?.url ?? request.url] }
        let configured = [task.config.baseUrl, task.config.cdnUrl].filter { !$0.isEmpty }
        return configured.compactMap { URL(string: $0) }
    }

    /// Tells the debug log that the scope kept `account`'s credential from `request`: a request
    /// refused for want of it is otherwise a mystery. Names origins only, never the credential.
    private func noteWithheld(from request: TransportRequest, of task: RequestTask, account: String) {
        guard task.config.debugLogEnabled, state.withLock({ current(account, in: $0).credential }) != nil else {
            return
        }
        task.addDebugNote(
            "credential withheld from \(Self.origin(of: request.url)) by AuthenticationInterceptor<\(A.self)>: "
                + whyWithheld(apiOrigins: apiOrigins(of: task, sending: request)))
    }

    private func whyWithheld(apiOrigins: [URL]) -> String {
        if InterceptorScope.isRequestsOwn { return "\(A.self).authenticates(_:apiOrigins:) refused it" }
        guard !apiOrigins.isEmpty else {
            return "NetworkConfig.baseUrl and cdnUrl are empty, so the configuration's interceptor authenticates"
                + " no request; give the request the interceptor itself, or widen authenticates(_:apiOrigins:)"
        }
        let origins = apiOrigins.map { Self.origin(of: $0) }.joined(separator: ", ")
        return "the configuration's interceptor authenticates only the origins of NetworkConfig.baseUrl and"
            + " cdnUrl (\(origins)); widen authenticates(_:apiOrigins:) for more"
    }

    /// `scheme://host:port`, without the path, query or user information a URL may hold.
    private static func origin(of url: URL) -> String {
        "\(url.scheme ?? "?")://\(url.host ?? "?")" + (url.port.map { ":\($0)" } ?? "")
    }

    /// Whether `sent`, refused, goes again as it is or after a refresh. A refresh starts only
    /// from the credential that is still current, under the lock: one that another request's
    /// refresh replaced meanwhile has had its refresh token spent, and refreshing it again would
    /// fail and fail every later request with it.
    private func nextStep(after sent: TransportRequest, of account: String) async -> NextStep {
        let found: (credential: A.Credential?, revision: Int)
        do throws(ErrandError) {
            _ = try await usableCredential(of: account)
            found = state.withLock { current(account, in: $0) }
        } catch {
            return .fail(error)
        }
        guard let credential = found.credential else { return .doNotRetry }
        var withCurrent = sent
        authenticator.apply(credential, to: &withCurrent)
        guard withCurrent == sent else { return .retry }
        return state.withLock { state in
            if let failure = failure(of: account, in: state) { return .fail(failure) }
            if let refresh = state.refreshes[account] { return .wait(refresh.task) }
            let now = current(account, in: state)
            guard now.revision == found.revision, let credential = now.credential else { return .lookAgain }
            return .wait(startRefresh(of: credential, account: account, revision: now.revision, in: &state))
        }
    }

    /// The error of a failed refresh of `account`'s credential as it still is.
    private func failure(of account: String, in state: State) -> ErrandError? {
        guard let failure = state.refreshFailures[account], failure.revision == current(account, in: state).revision
        else { return nil }
        return failure.error
    }

    /// The credential to send: the one a running refresh produces, a refreshed one when it
    /// requires refreshing, else the current one.
    private func usableCredential(of account: String) async throws(ErrandError) -> A.Credential? {
        let found = state.withLock { state -> Result<(A.Credential?, Task<A.Credential, any Error>?), ErrandError> in
            if let failure = failure(of: account, in: state) { return .failure(failure) }
            if let refresh = state.refreshes[account] { return .success((nil, refresh.task)) }
            let current = current(account, in: state)
            guard let credential = current.credential, credential.requiresRefresh else {
                return .success((current.credential, nil))
            }
            return .success(
                (nil, startRefresh(of: credential, account: account, revision: current.revision, in: &state)))
        }
        let (credential, refresh) = try found.get()
        guard let refresh else { return credential }
        return try await Self.value(of: refresh)
    }

    /// `authenticator`'s refresh of `credential`, its requests sending the cookies of `cookieJar`
    /// when there is one.
    private static func refreshing(_ credential: A.Credential, with authenticator: A, cookieJar: CookieJar?)
        async throws(ErrandError) -> A.Credential
    {
        do {
            return try await InterceptorScope.$cookieJar.withValue(cookieJar ?? InterceptorScope.cookieJar) {
                try await authenticator.refresh(credential)
            }
        } catch let error as ErrandError {
            throw error
        } catch {
            throw .cancelled
        }
    }

    /// Starts `account`'s one refresh, under the lock so that it is recorded before it can finish.
    private func startRefresh(
        of credential: A.Credential, account: String, revision: Int, in state: inout State
    ) -> Task<A.Credential, any Error> {
        state.refreshCount += 1
        let id = state.refreshCount
        let task = Task { [authenticator, store, self] () async throws -> A.Credential in
            do throws(ErrandError) {
                // A refresh that logs in again sends the account's session cookie.
                let jar = try store.map { store throws(ErrandError) in try store.cookieJar(account) }
                let fresh = try await Self.refreshing(credential, with: authenticator, cookieJar: jar)
                endRefresh(id, of: account, from: revision, with: .success(fresh))
                return fresh
            } catch {
                endRefresh(id, of: account, from: revision, with: .failure(error))
                throw error
            }
        }
        state.refreshes[account] = (id, task)
        return task
    }

    /// Ends refresh `id`: keeps the fresh credential — with a store, only when the account still
    /// holds the one refreshed — or the reason it failed. The store is written before the refresh
    /// is forgotten, outside the lock: meanwhile a request that needs the credential waits for
    /// the refresh, rather than start another from the spent one.
    private func endRefresh(
        _ id: Int, of account: String, from revision: Int, with outcome: Result<A.Credential, ErrandError>
    ) {
        if let store, case .success(let credential) = outcome { _ = store.replace(account, revision, credential) }
        state.withLock { state in
            guard state.refreshes[account]?.id == id else { return }
            state.refreshes[account] = nil
            switch outcome {
            case .success(let credential) where store == nil:
                state.credential = credential
                state.revision += 1
            case .success:
                break
            case .failure(let error):
                state.refreshFailures[account] = (revision, error)
            }
        }
    }

    private static func value(of refresh: Task<A.Credential, any Error>) async throws(ErrandError) -> A.Credential {
        do {
            return try await refresh.value
        } catch let error as ErrandError {
            throw error
        } catch {
            throw .cancelled
        }
    }
}
