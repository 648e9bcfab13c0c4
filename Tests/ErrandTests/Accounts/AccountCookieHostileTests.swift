import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// An account's cookies against sign-out: none survive it, in memory or on disk.
@Suite("Accounts: cookies against sign-out")
struct AccountCookieHostileTests {
    struct Token: AuthenticationCredential, Codable, Equatable {
        var access: String
        var requiresRefresh: Bool { false }
    }

    struct Bearer: Authenticator {
        func apply(_ credential: Token, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(credential.access)"
        }

        func refresh(_ credential: Token) async throws(ErrandError) -> Token { credential }
    }

    struct Echo: BaseRequest {
        var url: String
    }

    /// What a jar's file holds, as ``CookieJarFile`` writes it.
    private struct SavedJar: Encodable {
        var version = 1
        var cookies: [Cookie]
    }

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "errand-account-cookie-hostile-\(UUID().uuidString)")

    private var annsFile: URL { directory.appendingPathComponent("default.cookies/account-ann.json") }

    /// Ann's jar file is still being read — her first request, at launch — when she signs out.
    /// Sign-out deletes the file; the cookies read from it must not then become her jar, to be
    /// sent and written back to disk. (The read of a jar this size outlasts the sign-out's start
    /// by far; a few rounds make the overlap certain.)
    @Test func aSignOutDuringTheJarsFirstLoadLeavesNoCookieBehind() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try AccountStore<Token>(directory: directory)
        let agent = NetworkAgent(config: NetworkConfig())
        let session = Cookie(name: "session", value: "ann-secret", domain: "example.com", expiresAt: .distantFuture)
        let others = (0..<3000).map {
            Cookie(name: "c\($0)", value: "v", domain: "d\($0 % 100).example", expiresAt: .distantFuture)
        }
        let saved = try JSONEncoder().encode(SavedJar(cookies: [session] + others))
        try FileManager.default.createDirectory(
            at: annsFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        for round in 0..<5 {
            try store.signIn(Token(access: "a"), for: "ann")
            try saved.write(to: annsFile)
            let loading = Task.detached { try store.cookieJar(for: "ann") }
            try await Task.sleep(for: .milliseconds(2))
            await store.signOut("ann", agent: agent)
            _ = try await loading.value

            let jar = try store.cookieJar(for: "ann")
            #expect(jar.allCookies.isEmpty, "round \(round): Ann's cookies outlived her sign-out")
            jar.add(Cookie(name: "theme", value: "dark", domain: "example.com", expiresAt: .distantFuture))
            let written = (try? String(contentsOf: annsFile, encoding: .utf8)) ?? ""
            #expect(!written.contains("ann-secret"), "round \(round): and went back to disk")
            await store.signOut("ann", agent: agent)
        }
    }

    /// Ann's request waits in another agent's queue — one signOut was not given — when she
    /// signs out. Her cookies are deleted "file and all": the response it gets after that must
    /// not open her jar again and save the cookie it sets to her file.
    @Test func aRequestAdaptedAfterSignOutSavesNoCookieForTheGoneAccount() async throws {
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try TestServer()
        defer { server.stop() }
        let store = try AccountStore<Token>(directory: directory)
        try store.signIn(Token(access: "a"), for: "ann")
        func agent() -> NetworkAgent {
            let config = NetworkConfig()
            config.baseUrl = server.baseURL
            config.cacheDirectory = directory.appendingPathComponent("cache")
            config.addInterceptor(AuthenticationInterceptor(authenticator: Bearer(), store: store))
            return NetworkAgent(config: config)
        }
        let main = agent()
        let uploads = agent()
        uploads.maxConcurrentRequests = 1
        let busy = Task { try await uploads.response(Echo(url: "/delay/1")) }
        try await Task.sleep(for: .milliseconds(200))
        let setting = "session=ann-2; Max-Age=600".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let queued = Task { try await uploads.response(Echo(url: "/response-headers?Set-Cookie=" + setting)) }
        try await Task.sleep(for: .milliseconds(200))

        await store.signOut("ann", agent: main)
        _ = try await busy.value
        _ = try? await queued.value
        #expect(!FileManager.default.fileExists(atPath: annsFile.path), "a cookie file for a signed-out account")
        #expect(try store.cookieJar(for: "ann").allCookies.isEmpty)
    }
}
