import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `followsHTTPCaching` judges `Vary` by the request as it goes out — the credential an
/// interceptor applied, `authorization`, a custom `URLRequest`, the cookies the transport adds —
/// and a response to a request carrying `Authorization` answers that credential alone.
@Suite("Response cache: the request as sent")
struct HTTPCacheAsSentTests {
    /// Applies a bearer token, as an app's authenticator does.
    struct BearerAuthenticator: Authenticator {
        func apply(_ credential: Token, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(credential.access)"
        }

        func refresh(_ credential: Token) async throws(ErrandError) -> Token { credential }
    }

    struct Me: BaseRequest {
        var url = "/http-cache/me"
        var authorization: (username: String, password: String)?
        var headers: [String: String] = [:]
        var cachePolicy = CachePolicy.standard
        var followsHTTPCaching: Bool { true }
        var responseSerializerType: ResponseSerializerType { .data }
    }

    let server: TestServer
    let fixture: CacheFixture
    let accounts: URL

    init() throws {
        server = try TestServer()
        fixture = try CacheFixture(baseURL: server.baseURL)
        accounts = fixture.directory.deletingLastPathComponent()
            .appendingPathComponent("errand-accounts-\(UUID().uuidString)")
    }

    private func cleanUp() {
        fixture.removeDirectory()
        try? FileManager.default.removeItem(at: accounts)
    }

    func serve(_ headers: [String: String], name: String = "me") {
        server.setCacheableResource(name, CacheableResource(status: 200, body: #"{"me":1}"#, headers: headers))
    }

    func sent(_ name: String = "me") -> [RecordedRequest] {
        server.receivedRequests(path: "/http-cache/\(name)")
    }

    /// Ann and Bob signed in on one agent, with no cache folder per account.
    func signedInAgent() throws -> (NetworkAgent, AccountStore<Token>) {
        let store = try AccountStore<Token>(directory: accounts)
        try store.save(Token(access: "ann-secret-token", refresh: "ra"), for: "ann")
        try store.save(Token(access: "bob-secret-token", refresh: "rb"), for: "bob")
        let agent = fixture.makeAgent { config in
            config.addInterceptor(AuthenticationInterceptor(authenticator: BearerAuthenticator(), store: store))
        }
        return (agent, store)
    }

    @Test func aResponseVaryingOnAuthorizationIsNeverServedToAnotherAccount() async throws {
        defer { cleanUp() }
        serve(["Cache-Control": "max-age=600", "Vary": "Authorization"])
        let (agent, store) = try signedInAgent()
        #expect(try await !agent.response(Me()).isDataFromCache)
        #expect(try await agent.response(Me()).isDataFromCache, "Ann's own variant answers Ann")

        store.current = "bob"
        let bobs = try await agent.response(Me())
        #expect(!bobs.isDataFromCache, "Bob is never served Ann's profile")
        #expect(sent().last?.header("Authorization") == "Bearer bob-secret-token")
        #expect(try await agent.response(Me()).isDataFromCache)
        store.current = "ann"
        #expect(try await agent.response(Me()).isDataFromCache, "Bob's variant did not replace Ann's")
        #expect(sent().count == 2)
    }

    @Test(arguments: ["max-age=600", "private, max-age=600", "max-age=600, must-revalidate"])
    func aResponseToAnAuthorizedRequestAnswersThatCredentialAlone(cacheControl: String) async throws {
        defer { cleanUp() }
        serve(["Cache-Control": cacheControl])
        let (agent, store) = try signedInAgent()
        _ = try await agent.response(Me())
        #expect(try await agent.response(Me()).isDataFromCache, "a private cache keeps it for its user")
        store.current = "bob"
        #expect(try await !agent.response(Me()).isDataFromCache, "\(cacheControl): not for another credential")
        let anonymous = NetworkAgent(config: fixture.makeConfig())
        #expect(try await !anonymous.response(Me()).isDataFromCache, "nor for a request without one")
        #expect(sent().count == 3)
    }

    /// Applies an API key in a field of its own, as many APIs want it.
    struct KeyAuthenticator: Authenticator {
        func apply(_ credential: Token, to request: inout TransportRequest) {
            request.headers["X-Client-Key"] = credential.access
        }

        func refresh(_ credential: Token) async throws(ErrandError) -> Token { credential }
    }

    @Test func aResponseToAKeyAnAuthenticatorAppliedAnswersThatKeyAlone() async throws {
        defer { cleanUp() }
        serve(["Cache-Control": "max-age=600"])
        let store = try AccountStore<Token>(directory: accounts)
        try store.save(Token(access: "ann-key", refresh: "ra"), for: "ann")
        try store.save(Token(access: "bob-key", refresh: "rb"), for: "bob")
        let agent = fixture.makeAgent { config in
            config.addInterceptor(AuthenticationInterceptor(authenticator: KeyAuthenticator(), store: store))
        }
        _ = try await agent.response(Me())
        #expect(try await agent.response(Me()).isDataFromCache, "Ann's own response answers Ann")
        store.current = "bob"
        #expect(try await !agent.response(Me()).isDataFromCache, "Bob is never served what Ann's key fetched")
        #expect(sent().last?.header("X-Client-Key") == "bob-key")
        // A field of the request's own whose name marks a secret binds it the same way.
        let anonymous = NetworkAgent(config: fixture.makeConfig())
        var own = Me()
        own.headers = ["X-Session-Id": "s1"]
        _ = try await anonymous.response(own)
        #expect(try await anonymous.response(own).isDataFromCache)
        own.headers = ["X-Session-Id": "s2"]
        #expect(try await !anonymous.response(own).isDataFromCache)
        // No key of either reaches a file.
        let files =
            FileManager.default.enumerator(at: fixture.directory, includingPropertiesForKeys: nil)?
            .allObjects as? [URL] ?? []
        for file in files {
            let bytes = (try? Data(contentsOf: file)) ?? Data()
            #expect(bytes.range(of: Data("ann-key".utf8)) == nil && bytes.range(of: Data("bob-key".utf8)) == nil)
        }
    }

    @Test(arguments: ["public, max-age=600", "max-age=600, s-maxage=600"])
    func aResponseThatMayBeSharedAnswersEveryCredential(cacheControl: String) async throws {
        defer { cleanUp() }
        serve(["Cache-Control": cacheControl])
        let (agent, store) = try signedInAgent()
        _ = try await agent.response(Me())
        store.current = "bob"
        #expect(try await agent.response(Me()).isDataFromCache, "RFC 9111 §3.5: \(cacheControl) may be shared")
        #expect(sent().count == 1)
    }

    @Test func offlineTheCredentialAnInterceptorAppliesChoosesTooAndNothingIsSent() async throws {
        defer { cleanUp() }
        serve(["Cache-Control": "max-age=600", "Vary": "Authorization"])
        let (agent, store) = try signedInAgent()
        _ = try await agent.response(Me())
        agent.config.isOffline = true
        #expect(try await agent.response(Me()).isDataFromCache, "Ann's variant, offline")
        store.current = "bob"
        await #expect(throws: ErrandError.cacheMiss(.missing)) { try await agent.response(Me()) }
        #expect(sent().count == 1)
    }

    @Test func loadCacheChoosesByTheRequestAsBuilt() async throws {
        defer { cleanUp() }
        serve(["Cache-Control": "max-age=600", "Vary": "Authorization"])
        let (agent, store) = try signedInAgent()
        _ = try await agent.response(Me())
        #expect(agent.cacheMissReason(Me()) == .missing, "the interceptor's credential is not known without sending")
        let plain = fixture.makeAgent()
        _ = try await plain.response(Me(authorization: ("carol", "three")))
        #expect(plain.cacheMissReason(Me(authorization: ("carol", "three"))) == nil)
        #expect(plain.cacheMissReason(Me(authorization: ("dave", "four"))) == .missing)
        let onlyCached = Me(headers: ["Cache-Control": "only-if-cached"])
        store.current = "bob"
        await #expect(throws: ErrandError.cacheMiss(.missing)) { try await agent.response(onlyCached) }
        #expect(sent().count == 2)
    }

    @Test func theCredentialNeverReachesAFile() async throws {
        defer { cleanUp() }
        serve(["Cache-Control": "max-age=600", "Vary": "Authorization, Cookie"], name: "varying")
        serve(["Cache-Control": "max-age=600"])
        let (agent, _) = try signedInAgent()
        _ = try await agent.response(Me())
        _ = try await agent.response(Me(url: "/http-cache/varying", headers: ["Cookie": "session=ann-cookie"]))
        await agent.waitForCacheWrites()
        let files = fixture.entryFiles()
        #expect(fixture.storage != nil || files.count >= 3, "the entries are on disk")
        for file in files {
            let bytes = try Data(contentsOf: file)
            #expect(bytes.range(of: Data("ann-secret-token".utf8)) == nil, "\(file.lastPathComponent)")
            #expect(bytes.range(of: Data("ann-cookie".utf8)) == nil, "\(file.lastPathComponent)")
        }
        for entry in fixture.storage?.allEntries ?? [] {
            #expect(entry.details.range(of: Data("ann-secret-token".utf8)) == nil)
            #expect(entry.details.range(of: Data("ann-cookie".utf8)) == nil)
        }
    }

    /// A response that names the credential field in its `Vary` keeps the value as a hash too:
    /// the key an `Authenticator` applied, and a field of the request's own whose name marks a secret.
    @Test func aCredentialFieldAResponseVariesOnNeverReachesAFile() async throws {
        defer { cleanUp() }
        serve(["Cache-Control": "max-age=600", "Vary": "X-Client-Key, X-Session-Id"])
        let store = try AccountStore<Token>(directory: accounts)
        try store.save(Token(access: "ann-client-key", refresh: "ra"), for: "ann")
        let agent = fixture.makeAgent { config in
            config.addInterceptor(AuthenticationInterceptor(authenticator: KeyAuthenticator(), store: store))
        }
        let own = Me(headers: ["X-Session-Id": "ann-session-id"])
        _ = try await agent.response(own)
        #expect(try await agent.response(own).isDataFromCache, "the variant answers the same key")
        await agent.waitForCacheWrites()
        #expect(fixture.storage != nil || fixture.entryFiles().count >= 2, "the entries are on disk")
        let files =
            FileManager.default.enumerator(at: fixture.directory, includingPropertiesForKeys: nil)?
            .allObjects as? [URL] ?? []
        let stored = files.compactMap { try? Data(contentsOf: $0) } + (fixture.storage?.allEntries.map(\.details) ?? [])
        for bytes in stored {
            #expect(bytes.range(of: Data("ann-client-key".utf8)) == nil, "the applied key is on disk")
            #expect(bytes.range(of: Data("ann-session-id".utf8)) == nil, "the session id is on disk")
        }
    }

    @Test func theRequestsOwnAuthorizationSelectsTheVariant() async throws {
        defer { cleanUp() }
        serve(["Cache-Control": "max-age=600", "Vary": "Authorization"])
        let agent = fixture.makeAgent()
        _ = try await agent.response(Me(authorization: ("ann", "one")))
        #expect(try await agent.response(Me(authorization: ("ann", "one"))).isDataFromCache)
        #expect(try await !agent.response(Me(authorization: ("bob", "two"))).isDataFromCache)
        #expect(sent().count == 2)
    }

    @Test func aCustomURLRequestsFieldsSelectTheVariant() async throws {
        defer { cleanUp() }
        serve(["Cache-Control": "max-age=600", "Vary": "X-Tier"])
        struct Custom: BaseRequest {
            let target: URL
            let tier: String
            var url: String { "/ignored" }
            var followsHTTPCaching: Bool { true }
            var responseSerializerType: ResponseSerializerType { .data }
            func buildCustomURLRequest() -> URLRequest? {
                var request = URLRequest(url: target)
                request.setValue(tier, forHTTPHeaderField: "X-Tier")
                return request
            }
        }
        let target = try #require(URL(string: server.baseURL + "/http-cache/me"))
        let agent = fixture.makeAgent()
        _ = try await agent.response(Custom(target: target, tier: "gold"))
        #expect(try await agent.response(Custom(target: target, tier: "gold")).isDataFromCache)
        #expect(try await !agent.response(Custom(target: target, tier: "free")).isDataFromCache)
        #expect(sent().count == 2)
    }

    @Test func theCookiesTheTransportSendsSelectTheVariant() async throws {
        defer { cleanUp() }
        serve(["Cache-Control": "max-age=600", "Vary": "Cookie"])
        let cookies = CookieJar()
        let agent = fixture.makeAgent { $0.cookieJar = cookies }
        let url = try #require(URL(string: server.baseURL + "/http-cache/me"))
        func signIn(_ session: String) throws {
            cookies.add(Cookie(name: "session", value: session, domain: server.host))
        }
        try signIn("ann")
        _ = try await agent.response(Me())
        #expect(sent().last?.header("Cookie") == "session=ann", "the transport sent the stored cookie")
        #expect(try await agent.response(Me()).isDataFromCache)
        try signIn("bob")
        #expect(cookies.cookies(for: url).first?.value == "bob")
        #expect(try await !agent.response(Me()).isDataFromCache, "Bob's cookie selects another variant")
        #expect(sent().count == 2)
    }
}
