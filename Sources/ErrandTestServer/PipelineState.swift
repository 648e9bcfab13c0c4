import Foundation

/// What the request-pipeline endpoints (``PipelineRoutes``) remember, one per server: the bearer
/// tokens issued by `/auth/login` and `/auth/refresh` and their counters, the captchas handed
/// out, and how often each `/flaky/{key}` was called.
final class PipelineState: @unchecked Sendable {  // every `var` is read and written only while holding `lock`
    /// A pair of tokens as `/auth/login` and `/auth/refresh` hand them out.
    struct Grant {
        var accessToken: String
        var refreshToken: String
        var expiresIn: Int
    }

    /// The counters `/auth/stats` reports.
    struct AuthStats {
        var logins = 0
        /// Refreshes that issued new tokens.
        var refreshes = 0
        /// Every call to `/auth/refresh`, successful or not.
        var refreshAttempts = 0
        var protectedAccepted = 0
        var protectedRejected = 0
    }

    /// What a refresh token grants: the access token issued with it and the lifetime to give the next.
    private struct RefreshGrant {
        var accessToken: String
        var expiresIn: Int
    }

    private let lock = NSLock()
    /// Tells this server's tokens and captchas from another's, so a test cannot pass one server's
    /// token to another by mistake.
    private let tag = String(UInt32.random(in: 0x1000_0000...UInt32.max), radix: 16)
    private var issued = 0
    private var accessTokens: [String: Date] = [:]
    private var refreshTokens: [String: RefreshGrant] = [:]
    private var stats = AuthStats()
    private var openCaptchas: Set<String> = []
    private var flakyCalls: [String: Int] = [:]

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// A fresh access token and refresh token, the access token good for `expiresIn` seconds.
    private func issueLocked(expiresIn: Int) -> Grant {
        issued += 1
        let grant = Grant(
            accessToken: "access-\(tag)-\(issued)", refreshToken: "refresh-\(tag)-\(issued)", expiresIn: expiresIn)
        accessTokens[grant.accessToken] = Date(timeIntervalSinceNow: TimeInterval(expiresIn))
        refreshTokens[grant.refreshToken] = RefreshGrant(accessToken: grant.accessToken, expiresIn: expiresIn)
        return grant
    }

    // MARK: Tokens

    func login(expiresIn: Int) -> Grant {
        locked {
            stats.logins += 1
            return issueLocked(expiresIn: expiresIn)
        }
    }

    /// Counts an attempt to refresh, before any delay, so a test can see a refresh in flight.
    func countRefreshAttempt() {
        locked { stats.refreshAttempts += 1 }
    }

    /// New tokens for a current refresh token, which is used up, as is the access token issued
    /// with it; `nil` for a refresh token that was never issued, already used or revoked.
    func refresh(_ refreshToken: String) -> Grant? {
        locked {
            guard let old = refreshTokens.removeValue(forKey: refreshToken) else { return nil }
            accessTokens[old.accessToken] = nil
            stats.refreshes += 1
            return issueLocked(expiresIn: old.expiresIn)
        }
    }

    /// A new access token for the log-in whose refresh token `session` is — the session cookie
    /// `/session/login` set — which stays valid; `nil` for an unknown or revoked session.
    func renewAccess(forSession session: String) -> (accessToken: String, expiresIn: Int)? {
        locked {
            guard let grant = refreshTokens[session] else { return nil }
            stats.refreshes += 1
            issued += 1
            let accessToken = "access-\(tag)-\(issued)"
            accessTokens[accessToken] = Date(timeIntervalSinceNow: TimeInterval(grant.expiresIn))
            return (accessToken, grant.expiresIn)
        }
    }

    /// Whether `token` was issued, has not expired and was not invalidated; counted either way.
    func checkAccessToken(_ token: String?) -> Bool {
        locked {
            let current = token.flatMap { accessTokens[$0] }.map { $0 > Date() } ?? false
            if current { stats.protectedAccepted += 1 } else { stats.protectedRejected += 1 }
            return current
        }
    }

    /// Invalidates every access token issued so far; refresh tokens stay good.
    func expireAccessTokens() {
        locked { accessTokens.removeAll() }
    }

    /// Invalidates every refresh token issued so far; access tokens stay good until they expire.
    func revokeRefreshTokens() {
        locked { refreshTokens.removeAll() }
    }

    var authStats: AuthStats {
        locked { stats }
    }

    // MARK: Captcha

    /// A new captcha id, good for one answer.
    func newCaptcha() -> String {
        locked {
            issued += 1
            let sid = "captcha-\(tag)-\(issued)"
            openCaptchas.insert(sid)
            return sid
        }
    }

    /// The answer expected for a captcha: its id reversed.
    static func captchaAnswer(sid: String) -> String {
        String(sid.reversed())
    }

    /// Whether `key` answers the open captcha `sid`; the captcha is used up either way.
    func solveCaptcha(sid: String, key: String) -> Bool {
        locked { openCaptchas.remove(sid) != nil && key == Self.captchaAnswer(sid: sid) }
    }

    // MARK: Flaky

    /// Counts a call to `/flaky/{key}` and returns its number, from 1.
    func countFlakyCall(key: String) -> Int {
        locked {
            flakyCalls[key, default: 0] += 1
            return flakyCalls[key, default: 0]
        }
    }

    func flakyCallCount(key: String) -> Int {
        locked { flakyCalls[key] ?? 0 }
    }
}
