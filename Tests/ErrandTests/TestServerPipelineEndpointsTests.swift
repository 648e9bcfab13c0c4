import ErrandTestServer
import Foundation
import Testing

/// `/auth/…`, `/captcha/…`, `/flaky/{key}` and `/api-error`, each test on a server of its own so
/// tokens and counters never leak from one test into another.
@Suite("TestServer pipeline endpoints")
struct TestServerPipelineEndpointsTests {
    // MARK: /auth

    @Test func loginGivesABearerTokenThatProtectedAccepts() async throws {
        let server = try TestServer()
        let login = try await RawHTTP.login(server, form: "username=ann&password=secret")
        #expect(login.status == 200)
        let tokens = try login.json()
        let token = try #require(tokens["access_token"] as? String)
        #expect(tokens["refresh_token"] is String)
        #expect(tokens["token_type"] as? String == "Bearer")
        #expect(tokens["expires_in"] as? Int == 3600)

        let protected = try await RawHTTP.get(server, "/auth/protected", headers: ["Authorization: Bearer \(token)"])
        #expect(protected.status == 200)
        let answer = try protected.json()
        #expect(answer["authenticated"] as? Bool == true)
        #expect(answer["token"] as? String == token)
        #expect(answer["path"] as? String == "/auth/protected")

        let nested = try await RawHTTP.request(
            server, "POST", "/auth/protected/users/42", headers: ["Authorization: bearer \(token)"])
        #expect(nested.status == 200)
        #expect(try nested.json()["path"] as? String == "/auth/protected/users/42")

        let json = try await RawHTTP.login(server, json: #"{"username": "bob", "password": "pw", "expires_in": 60}"#)
        #expect(try json.json()["expires_in"] as? Int == 60)
        #expect(try json.json()["access_token"] as? String != token)
        #expect(server.loginCount == 2)
    }

    @Test func loginWithoutCredentialsIsABadRequest() async throws {
        let server = try TestServer()
        for form in ["username=ann", "username=&password=x", "username=a&password=b&expires_in=soon"] {
            let refused = try await RawHTTP.login(server, form: form)
            #expect(refused.status == 400)
            #expect(try refused.json()["error"] as? String == "invalid_request")
        }
        #expect(server.loginCount == 0)
    }

    @Test func aMissingUnknownOrExpiredTokenGets401Bearer() async throws {
        let server = try TestServer()
        let expired = try #require(
            try await RawHTTP.login(server, form: "username=a&password=b&expires_in=0").json()["access_token"]
                as? String)
        for headers in [[], ["Authorization: Bearer nonsense"], ["Authorization: Bearer \(expired)"]] {
            let refused = try await RawHTTP.get(server, "/auth/protected/x", headers: headers)
            #expect(refused.status == 401)
            #expect(refused.headers["www-authenticate"] == #"Bearer error="invalid_token""#)
            #expect(try refused.json()["error"] as? String == "invalid_token")
        }
    }

    @Test func expireInvalidatesAccessTokensButNotRefreshTokens() async throws {
        let server = try TestServer()
        let first = try await RawHTTP.login(server, form: "username=a&password=b").json()
        let token = try #require(first["access_token"] as? String)
        #expect(try await RawHTTP.protected(server, token).status == 200)

        #expect(try await RawHTTP.request(server, "POST", "/auth/expire").status == 204)
        #expect(try await RawHTTP.protected(server, token).status == 401)

        let refreshToken = try #require(first["refresh_token"] as? String)
        let refreshed = try await RawHTTP.refresh(server, refreshToken)
        #expect(refreshed.status == 200)
        let fresh = try #require(try refreshed.json()["access_token"] as? String)
        #expect(try await RawHTTP.protected(server, fresh).status == 200)

        server.expireAccessTokens()
        #expect(try await RawHTTP.protected(server, fresh).status == 401)
    }

    @Test func refreshIssuesNewTokensAndUsesUpTheOldOnes() async throws {
        let server = try TestServer()
        let login = try await RawHTTP.login(server, form: "username=a&password=b&expires_in=120").json()
        let oldAccess = try #require(login["access_token"] as? String)
        let oldRefresh = try #require(login["refresh_token"] as? String)

        let refreshed = try await RawHTTP.refresh(server, oldRefresh)
        #expect(refreshed.status == 200)
        let tokens = try refreshed.json()
        let newAccess = try #require(tokens["access_token"] as? String)
        #expect(tokens["refresh_token"] as? String != oldRefresh)
        #expect(tokens["token_type"] as? String == "Bearer")
        #expect(tokens["expires_in"] as? Int == 120)
        #expect(newAccess != oldAccess)
        #expect(try await RawHTTP.protected(server, newAccess).status == 200)
        #expect(try await RawHTTP.protected(server, oldAccess).status == 401)
        #expect(server.refreshCount == 1)

        let reused = try await RawHTTP.refresh(server, oldRefresh)
        #expect(reused.status == 401)
        #expect(try reused.json()["error"] as? String == "invalid_grant")
        #expect(server.refreshCount == 1)
        #expect(server.refreshAttemptCount == 2)

        let stats = try await RawHTTP.get(server, "/auth/stats").json()
        #expect(stats["logins"] as? Int == 1)
        #expect(stats["refreshes"] as? Int == 1)
        #expect(stats["refresh_attempts"] as? Int == 2)
        #expect(stats["protected_ok"] as? Int == 1)
        #expect(stats["protected_rejected"] as? Int == 1)
    }

    @Test func refreshTakesJSONAndAnOptionalBoundedDelay() async throws {
        let server = try TestServer()
        let refreshToken = try #require(
            try await RawHTTP.login(server, form: "username=a&password=b").json()["refresh_token"] as? String)
        #expect(try await RawHTTP.refresh(server, refreshToken, query: "?delay_ms=5001").status == 400)
        #expect(try await RawHTTP.refresh(server, refreshToken, query: "?delay_ms=soon").status == 400)

        let slow = try await RawHTTP.request(
            server, "POST", "/auth/refresh?delay_ms=10", headers: ["Content-Type: application/json"],
            body: Data(#"{"refresh_token": "\#(refreshToken)"}"#.utf8))
        #expect(slow.status == 200)
        let missing = try await RawHTTP.refresh(server, "")
        #expect(missing.status == 400)
        #expect(server.refreshCount == 1)
        #expect(server.refreshAttemptCount == 4)
    }

    @Test func revokedRefreshTokensGet401() async throws {
        let server = try TestServer()
        let first = try await RawHTTP.login(server, form: "username=a&password=b").json()
        let second = try await RawHTTP.login(server, form: "username=a&password=b").json()

        #expect(try await RawHTTP.request(server, "POST", "/auth/revoke").status == 204)
        let refused = try await RawHTTP.refresh(server, try #require(first["refresh_token"] as? String))
        #expect(refused.status == 401)
        #expect(try refused.json()["error"] as? String == "invalid_grant")
        // Access tokens outlive the revocation.
        #expect(try await RawHTTP.protected(server, try #require(first["access_token"] as? String)).status == 200)

        let third = try await RawHTTP.login(server, form: "username=a&password=b").json()
        server.revokeRefreshTokens()
        for grant in [second, third] {
            #expect(try await RawHTTP.refresh(server, try #require(grant["refresh_token"] as? String)).status == 401)
        }
        #expect(server.refreshCount == 0)
        #expect(server.refreshAttemptCount == 3)
    }

    @Test func protectedInBodyReportsABadTokenInA200() async throws {
        let server = try TestServer()
        let rejected = try await RawHTTP.get(server, "/auth/protected-in-body", headers: ["Authorization: Bearer x"])
        #expect(rejected.status == 200)
        let error = try #require(try rejected.json()["error"] as? [String: Any])
        #expect(error["error_code"] as? Int == 5)
        #expect(error["error_msg"] as? String == "User authorization failed: access_token has expired.")

        let token = try #require(
            try await RawHTTP.login(server, form: "username=a&password=b").json()["access_token"] as? String)
        for (target, headers) in [
            ("/auth/protected-in-body", ["Authorization: Bearer \(token)"]),
            ("/auth/protected-in-body?access_token=\(token)", []),
        ] {
            let accepted = try await RawHTTP.get(server, target, headers: headers)
            #expect(accepted.status == 200)
            let response = try #require(try accepted.json()["response"] as? [String: Any])
            #expect(response["authenticated"] as? Bool == true)
            #expect(response["token"] as? String == token)
        }
    }

    // MARK: /captcha

    @Test func captchaAsksUntilTheSidIsAnsweredOnce() async throws {
        let server = try TestServer()
        let first = try await RawHTTP.captcha(server, "/captcha/protected")
        #expect(first.code == 14)
        #expect(first.message == "Captcha needed")
        #expect(first.image == server.baseURL + "/captcha/\(first.sid).png")
        let image = try await RawHTTP.get(server, "/captcha/\(first.sid).png")
        #expect(image.status == 200)
        #expect(image.headers["content-type"] == "image/png")

        let wrong = try await RawHTTP.captcha(server, "/captcha/protected?captcha_sid=\(first.sid)&captcha_key=wrong")
        #expect(wrong.code == 14)
        #expect(wrong.sid != first.sid)
        // A sid takes one answer, right or wrong.
        let late = TestServer.captchaAnswer(sid: first.sid)
        #expect(
            try await RawHTTP.captcha(server, "/captcha/protected?captcha_sid=\(first.sid)&captcha_key=\(late)").code
                == 14)

        let key = TestServer.captchaAnswer(sid: wrong.sid)
        #expect(key == String(wrong.sid.reversed()))
        let passed = try await RawHTTP.get(server, "/captcha/protected?captcha_sid=\(wrong.sid)&captcha_key=\(key)")
        #expect(passed.status == 200)
        #expect((try passed.json()["response"] as? [String: Any])?["passed"] as? Bool == true)
    }

    // MARK: /flaky

    @Test func flakyFailsKTimesWithRetryAfterThenSucceeds() async throws {
        let server = try TestServer()
        for call in 1...2 {
            let failed = try await RawHTTP.request(server, "POST", "/flaky/a?failures=2&status=429&retry_after=1")
            #expect(failed.status == 429)
            #expect(failed.headers["retry-after"] == "1")
            let body = try failed.json()
            #expect(body["error"] as? String == "flaky")
            #expect(body["call"] as? Int == call)
        }
        let succeeded = try await RawHTTP.request(server, "POST", "/flaky/a?failures=2&status=429&retry_after=1")
        #expect(succeeded.status == 200)
        let body = try succeeded.json()
        #expect(body["key"] as? String == "a")
        #expect(body["call"] as? Int == 3)
        #expect(body["method"] as? String == "POST")
        #expect(server.flakyCallCount(key: "a") == 3)

        // Defaults: one 503 without Retry-After, each key counted on its own.
        let first = try await RawHTTP.request(server, "DELETE", "/flaky/b")
        #expect(first.status == 503)
        #expect(first.headers["retry-after"] == nil)
        #expect(try await RawHTTP.request(server, "PUT", "/flaky/b").status == 200)
        #expect(server.flakyCallCount(key: "b") == 2)
        #expect(server.flakyCallCount(key: "never") == 0)
    }

    @Test func flakyPassesAnHTTPDateRetryAfterThrough() async throws {
        let server = try TestServer()
        let dated = try await RawHTTP.get(
            server, "/flaky/date?retry_after=Wed,%2021%20Oct%202015%2007:28:00%20GMT&status=503")
        #expect(dated.status == 503)
        #expect(dated.headers["retry-after"] == "Wed, 21 Oct 2015 07:28:00 GMT")

        #expect(try await RawHTTP.get(server, "/flaky/x?retry_after=1%0D%0AX:%201").status == 400)
        #expect(try await RawHTTP.get(server, "/flaky/x?status=200").status == 400)
        #expect(try await RawHTTP.get(server, "/flaky/x?failures=-1").status == 400)
        #expect(try await RawHTTP.get(server, "/flaky/x?mode=slow").status == 400)
        #expect(server.flakyCallCount(key: "x") == 0)
    }

    @Test func flakyDropModeClosesTheConnectionUnanswered() async throws {
        let server = try TestServer()
        for _ in 1...2 {
            await #expect(throws: URLError.self) {
                _ = try await RawHTTP.get(server, "/flaky/drop?mode=drop&failures=2")
            }
        }
        let answered = try await RawHTTP.get(server, "/flaky/drop?mode=drop&failures=2")
        #expect(answered.status == 200)
        #expect(try answered.json()["call"] as? Int == 3)
        #expect(server.flakyCallCount(key: "drop") == 3)
    }

    // MARK: /api-error

    @Test func apiErrorPutsTheErrorInA200Body() async throws {
        let server = try TestServer()
        let answer = try await RawHTTP.get(server, "/api-error?code=6&message=Too%20many%20requests%20per%20second")
        #expect(answer.status == 200)
        #expect(answer.headers["content-type"] == "application/json")
        let error = try #require(try answer.json()["error"] as? [String: Any])
        #expect(error["error_code"] as? Int == 6)
        #expect(error["error_msg"] as? String == "Too many requests per second")

        let defaults = try #require(try await RawHTTP.get(server, "/api-error").json()["error"] as? [String: Any])
        #expect(defaults["error_code"] as? Int == 1)
        #expect(defaults["error_msg"] as? String == "Unknown error occurred")
        #expect(try await RawHTTP.get(server, "/api-error?code=six").status == 400)
    }
}

extension RawHTTP.Response {
    /// The body as a JSON object.
    fileprivate func json() throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
    }
}

extension RawHTTP {
    fileprivate static func login(_ server: TestServer, form: String) async throws -> Response {
        try await request(
            server, "POST", "/auth/login", headers: ["Content-Type: application/x-www-form-urlencoded"],
            body: Data(form.utf8))
    }

    fileprivate static func login(_ server: TestServer, json: String) async throws -> Response {
        try await request(
            server, "POST", "/auth/login", headers: ["Content-Type: application/json"], body: Data(json.utf8))
    }

    fileprivate static func refresh(_ server: TestServer, _ token: String, query: String = "") async throws
        -> Response
    {
        try await request(
            server, "POST", "/auth/refresh" + query, headers: ["Content-Type: application/x-www-form-urlencoded"],
            body: Data("refresh_token=\(token)".utf8))
    }

    fileprivate static func protected(_ server: TestServer, _ token: String) async throws -> Response {
        try await get(server, "/auth/protected", headers: ["Authorization: Bearer \(token)"])
    }

    /// The VK-style captcha error a `/captcha/protected` request got.
    fileprivate static func captcha(_ server: TestServer, _ target: String) async throws -> (
        code: Int?, message: String?, sid: String, image: String?
    ) {
        let response = try await get(server, target)
        let error = try #require(try response.json()["error"] as? [String: Any])
        return (
            error["error_code"] as? Int, error["error_msg"] as? String, try #require(error["captcha_sid"] as? String),
            error["captcha_img"] as? String
        )
    }
}
