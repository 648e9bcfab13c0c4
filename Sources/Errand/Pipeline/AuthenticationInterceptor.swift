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
/// - Only requests to the app's own API carry the credential: by default those to the origin of
///   the agent's ``NetworkConfig/baseUrl`` or ``NetworkConfig/cdnUrl``
///   (``Authenticator/authenticates(_:apiOrigins:)`` widens it). Interceptors and URL filters
///   otherwise apply to every request of the agent, a request type with its own `baseUrl`
///   included: this one must not hand the app's token to a third party, nor refresh it for a
///   third party's `401`.
public final class AuthenticationInterceptor<A: Authenticator>: RequestInterceptor, Sendable {
    private struct State {
        var credential: A.Credential?
        /// Counts changes of `credential`, so that a refresh starts only from the one still current.
        var generation = 0
        var refresh: (id: Int, task: Task<A.Credential, any Error>)?
        var refreshCount = 0
        /// Why the current credential could not be refreshed; cleared by a new credential.
        var refreshFailure: ErrandError?

        mutating func replaceCredential(with credential: A.Credential?) {
            self.credential = credential
            generation += 1
        }
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
    private let state: Locked<State>

    /// Creates an interceptor; with a `nil` credential, requests go out unauthenticated until one is set.
    public init(authenticator: A, credential: A.Credential?) {
        self.authenticator = authenticator
        self.state = Locked(State(credential: credential))
    }

    /// The credential applied to requests; set it after a log-in, or `nil` after a log-out.
    public var credential: A.Credential? {
        get { state[\.credential] }
        set {
            state.withLock { state in
                state.replaceCredential(with: newValue)
                state.refreshFailure = nil
            }
        }
    }

    /// Applies the current credential, after the refresh in progress or one it needs.
    public func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest
    {
        guard isInScope(request, of: task), let credential = try await usableCredential() else { return request }
        var adapted = request
        authenticator.apply(credential, to: &adapted)
        return adapted
    }

    /// ``RetryDecision/retry`` for an authentication error, once the credential was refreshed —
    /// or at once when the request was sent with an older credential than the current one.
    public func retry(_ task: RequestTask, dueTo error: ErrandError) async -> RetryDecision {
        guard authenticator.isAuthenticationError(error, response: task.response), task.attemptCount <= 2,
            let sent = task.sentRequest, isInScope(sent, of: task)
        else { return .doNotRetry }
        while true {
            switch await nextStep(after: sent) {
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

    /// Whether `request` of `task` may carry the credential, by the authenticator's scope.
    private func isInScope(_ request: TransportRequest, of task: RequestTask) -> Bool {
        let configured = [task.config.baseUrl, task.config.cdnUrl].filter { !$0.isEmpty }
        return authenticator.authenticates(request, apiOrigins: configured.compactMap { URL(string: $0) })
    }

    /// Whether `sent`, refused, goes again as it is or after a refresh. A refresh starts only
    /// from the credential that is still current, under the lock: one that another request's
    /// refresh replaced meanwhile has had its refresh token spent, and refreshing it again would
    /// fail and fail every later request with it.
    private func nextStep(after sent: TransportRequest) async -> NextStep {
        let current: (credential: A.Credential?, generation: Int)
        do throws(ErrandError) {
            _ = try await usableCredential()
            current = state.withLock { ($0.credential, $0.generation) }
        } catch {
            return .fail(error)
        }
        guard let credential = current.credential else { return .doNotRetry }
        var withCurrent = sent
        authenticator.apply(credential, to: &withCurrent)
        guard withCurrent == sent else { return .retry }
        return state.withLock { state in
            if let failure = state.refreshFailure { return .fail(failure) }
            if let refresh = state.refresh { return .wait(refresh.task) }
            guard state.generation == current.generation, let credential = state.credential else { return .lookAgain }
            return .wait(startRefresh(of: credential, in: &state))
        }
    }

    /// The credential to send: the one a running refresh produces, a refreshed one when it
    /// requires refreshing, else the current one.
    private func usableCredential() async throws(ErrandError) -> A.Credential? {
        let found = state.withLock { state -> Result<(A.Credential?, Task<A.Credential, any Error>?), ErrandError> in
            if let failure = state.refreshFailure { return .failure(failure) }
            if let refresh = state.refresh { return .success((nil, refresh.task)) }
            guard let credential = state.credential, credential.requiresRefresh else {
                return .success((state.credential, nil))
            }
            return .success((nil, startRefresh(of: credential, in: &state)))
        }
        let (credential, refresh) = try found.get()
        guard let refresh else { return credential }
        return try await Self.value(of: refresh)
    }

    /// Starts the one refresh, under the lock so that it is recorded before it can finish.
    private func startRefresh(of credential: A.Credential, in state: inout State) -> Task<A.Credential, any Error> {
        state.refreshCount += 1
        let id = state.refreshCount
        let task = Task { [authenticator, self] () async throws -> A.Credential in
            do throws(ErrandError) {
                let fresh = try await authenticator.refresh(credential)
                endRefresh(id, with: .success(fresh))
                return fresh
            } catch {
                endRefresh(id, with: .failure(error))
                throw error
            }
        }
        state.refresh = (id, task)
        return task
    }

    private func endRefresh(_ id: Int, with outcome: Result<A.Credential, ErrandError>) {
        state.withLock { state in
            guard state.refresh?.id == id else { return }
            state.refresh = nil
            switch outcome {
            case .success(let credential): state.replaceCredential(with: credential)
            case .failure(let error): state.refreshFailure = error
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
