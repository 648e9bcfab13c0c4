// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
// The code README.md shows, compiled (DocumentedCodeTests checks each snippet is the README's).
// snippet: README.md
import Errand
// end snippet
import Foundation

// What the README's code takes as given: a view controller, a progress bar, screens.
private func show<T>(_ value: T, stale: Bool = false) {}
private func report<T>(_ value: T) {}
private func handle<T>(_ value: T) {}
private final class ProgressBar: Sendable { func show(_ fraction: Double) {} }
private let bar = ProgressBar()
private let videosFolder = FileManager.default.temporaryDirectory

enum ReadmeSnippets {
    // snippet: README.md
    // One type per API call; override only what differs.
    struct GetUserInfoApi: BaseRequest {
        let userId: String
        var url: String { "/users/info" }
        var arguments: [String: any Sendable]? { ["userId": userId] }
        var jsonValidator: JSONValidator? { ["nick": .string, "level": .number] }
    }

    struct RegisterApi: BaseRequest {
        let username: String, password: String
        var url: String { "/users/register" }
        var method: HTTPMethod { .post }
        var arguments: [String: any Sendable]? { ["username": username, "password": password] }
    }
    // end snippet

    @MainActor static func tour(viewController: any RequestDelegate) async throws {
        // snippet: README.md
        NetworkConfig.shared.baseUrl = "https://api.example.com"

        // 1. async/await — cancelling the Swift task cancels the HTTP request.
        let response = try await GetUserInfoApi(userId: "42").response()
        print(response.statusCode, response.jsonObject ?? "")

        // 2. closures, on NetworkConfig.shared.callbackQueue (main by default).
        RegisterApi(username: "ann", password: "s3cret").start(
            success: { task in print("registered:", task.responseStatusCode) },
            failure: { task in print("failed:", task.error as Any) })

        // 3. a delegate, held weakly and called on the main actor.
        GetUserInfoApi(userId: "42").start(delegate: viewController)
        // end snippet
    }

    static func stub() async throws {
        // snippet: README.md
        let agent = NetworkAgent(transport: StubTransport { _ in
            Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8))
        })
        let user = try await agent.response(GetUserInfoApi(userId: "42"))
        // end snippet
        _ = user
    }

    // snippet: README.md
    struct FeedApi: BaseRequest {
        let token: String
        var url: String { "/feed" }
        var arguments: [String: any Sendable]? { ["token": token, "page": 1] }
        var cacheTimeInSeconds: Int { 300 }
        var cachePolicy: CachePolicy { .offlineFallback }       // serve the last feed when offline
        func cacheKeyArguments(_ arguments: [String: any Sendable]?) -> [String: any Sendable]? {
            arguments?.filter { $0.key != "token" }             // a new token does not split the cache
        }
    }
    // end snippet

    static func caching(token: String, listResponse: Response, annsCacheFolder: URL) async throws {
        // snippet: README.md
        // A screen refresh: the cached feed at once, then the fresh one.
        for try await response in FeedApi(token: token).cacheThenNetwork() {
            show(response, stale: response.isStale)
        }

        let cached = try FeedApi(token: token).loadCache()          // never the network; throws why not
        // end snippet
        // snippet: README.md
        let agent = NetworkAgent.shared
        try await agent.saveCache(listResponse, for: FeedApi(token: token))   // one response, another request's entry
        try await agent.removeCache(FeedApi(token: token))
        await agent.clearCache(in: annsCacheFolder)   // one folder; with no argument, every entry
        await agent.waitForCacheWrites()   // every store on disk, before a tool exits
        // end snippet
        // snippet: README.md
        NetworkConfig.shared.isOffline = true            // every request from now on: the cache, never the network
        let feed = try await FeedApi(token: token).response()      // the last feed at once, feed.isStale if expired
        let expired = try FeedApi(token: token).loadCache(allowingExpired: true)
        // end snippet
        // snippet: README.md
        let feedKeeper = NetworkAgent.shared.keepFresh(FeedApi(token: token), every: 30)   // now, then every 30 s
        feedKeeper.cancel()   // or let it go: it sends while it is kept
        // end snippet
        _ = (cached, feed, expired)
    }

    // snippet: README.md
    struct VideoApi: BaseRequest {
        var url: String { "/videos/42.mp4" }
        var resumableDownloadPath: String? { videosFolder.path + "/" }   // a folder: the file is 42.mp4
    }
    // end snippet

    static func download() async throws {
        // snippet: README.md
        let task = VideoApi().start()
        Task { for await progress in task.downloadProgress { bar.show(progress.fractionCompleted ?? 0) } }
        let file = try await task.value.fileURL
        // end snippet
        _ = file
    }

    // snippet: README.md
    struct AvatarApi: BaseRequest {
        let photo: URL
        var url: String { "/me/avatar" }
        var method: HTTPMethod { .post }
        var constructingBody: (@Sendable (inout MultipartFormData) -> Void)? {
            { [photo] form in form.append(photo, name: "avatar") }   // streamed from disk
        }
    }
    // end snippet

    struct Token: AuthenticationCredential, Codable {
        let access: String
        let refresh: String
        var requiresRefresh: Bool { false }
    }

    struct RefreshApi: BaseRequest {
        let refreshToken: String
        var url: String { "/oauth/token" }
        var usesConfigInterceptors: Bool { false }
    }

    // snippet: README.md
    struct TokenAuthenticator: Authenticator {
        func apply(_ token: Token, to request: inout TransportRequest) {
            request.headers["Authorization"] = "Bearer \(token.access)"
        }
        func refresh(_ token: Token) async throws(ErrandError) -> Token {
            try await RefreshApi(refreshToken: token.refresh).decoded(Token.self)  // usesConfigInterceptors = false
        }
    }
    // end snippet

    static func interceptors(saved: Token?, annsToken: Token, bobsToken: Token) async throws {
        // snippet: README.md
        NetworkConfig.shared.addInterceptor(AuthenticationInterceptor(authenticator: TokenAuthenticator(), credential: saved))
        NetworkConfig.shared.addInterceptor(RetryPolicy())   // 3 attempts, backoff with jitter, Retry-After
        // end snippet
        // snippet: README.md
        let store = try AccountStore<Token>()   // its file: default.accounts.json in the app's folder
        NetworkConfig.shared.addInterceptor(AuthenticationInterceptor(authenticator: TokenAuthenticator(), store: store))
        NetworkConfig.shared.addCacheDirPathFilter(AccountCacheDirPathFilter(store: store))   // a cache per account
        try store.signIn(annsToken, for: "ann")   // after Ann's log-in: requests from now on are hers
        try store.signIn(bobsToken, for: "bob")   // Bob signs in on the same device: from now on, his
        store.current = "ann"                     // back to Ann, whose credential the store kept
        await store.signOut("ann")                // her credential, cached responses and requests in flight go
        // end snippet
    }

    struct TelegramUpdates: LongPollSource {
        let token: String
        func fetchParameters(using agent: NetworkAgent) async throws(ErrandError) -> LongPollParameters {
            LongPollParameters(server: "https://api.telegram.org/bot\(token)/getUpdates", cursor: "0")
        }
        func pollArguments(for parameters: LongPollParameters, wait: Int) -> [String: any Sendable] {
            ["offset": parameters.cursor, "timeout": wait]
        }
        func read(_ reply: Response, for parameters: LongPollParameters) throws(ErrandError) -> LongPollReply<Int> {
            .events([], nextCursor: parameters.cursor)
        }
    }

    struct ChatCompletionsApi: BaseRequest {
        let prompt: String
        var url: String { "/v1/chat/completions" }
    }

    struct ChatChunk: Decodable { let text: String }
    struct NotificationsApi: BaseRequest { var url: String { "/notifications" } }
    struct Notification: Decodable { let title: String }
    struct ChatApi: BaseRequest {
        let room: String
        var url: String { "/chat/\(room)" }
    }
    struct ChatLine: Decodable { let text: String }

    static func feeds(token: String) async throws {
        // snippet: README.md
        for try await update in LongPoll(TelegramUpdates(token: token), wait: 50) {
            handle(update)
        }
        // end snippet
        // snippet: README.md
        let stream = try await ChatCompletionsApi(prompt: "Hello").stream()
        for try await event in stream.events {
            guard event.data != "[DONE]" else { break }
            print(try event.decode(ChatChunk.self).text, terminator: "")  // ChatChunk: your Decodable chunk
        }
        // end snippet
        // snippet: README.md
        for try await event in EventSource(NotificationsApi()) {
            show(try event.decode(Notification.self))
        }
        // end snippet
        // snippet: README.md
        let socket = try await ChatApi(room: "general").webSocket()
        try await socket.send(#"{"text":"hello"}"#)
        for try await message in socket {
            print(try message.decode(ChatLine.self).text)  // ChatLine: your Decodable message
        }
        // end snippet
    }

    struct PageApi: BaseRequest {
        let page: Int
        init(_ page: Int) { self.page = page }
        var url: String { "/pages/\(page)" }
    }
    struct LoginApi: BaseRequest {
        var url: String { "/login" }
        var method: HTTPMethod { .post }
    }
    struct ProfileApi: BaseRequest {
        let token: String
        var url: String { "/profile" }
    }
    struct StatusApi: BaseRequest { var url: String { "/status" } }

    static func groups() async throws {
        // snippet: README.md
        let pages = try await BatchRequest(requests: [PageApi(1), PageApi(2), PageApi(3)]).responses()  // in order

        var chain = ChainRequest()
        chain.add(LoginApi()) { chain, login in
            chain.add(ProfileApi(token: login.responseString ?? ""))
        }
        chain.start(success: { task in show(task.tasks) }, failure: { task in report(task.failedTask) })
        // end snippet
        _ = pages
    }

    static func testServer() throws {
        // snippet: README.md
        NetworkConfig.shared.baseUrl = "http://127.0.0.1:8080"
        // end snippet
        // snippet: README.md
        let url = try NetworkAgent.shared.buildRequestUrl(GetUserInfoApi(userId: "42"))   // http://127.0.0.1:8080/users/info
        // end snippet
        // snippet: README.md
        let status = try StatusApi().responseSync().statusCode
        // end snippet
        _ = (url, status)
    }

    // snippet: README.md
    @MainActor final class ProfileModel {
        var nick = ""
        func load() {
            GetUserInfoApi(userId: "42").startOnMainActor(success: { task in
                self.nick = (task.responseJSONObject as? [String: Any])?["nick"] as? String ?? ""
            })
        }
    }
    // end snippet

    static func transportsAndConnections(config: NetworkConfig) throws {
        // snippet: README.md
        let agent = NetworkAgent(config: config, transport: URLSessionTransport(configuration: config.sessionConfiguration))
        // end snippet
        _ = agent
        // snippet: README.md
        var connection = ConnectionOptions()
        connection.trustedRoots = .adding([URL(fileURLWithPath: "/etc/company/root-ca.pem")])  // a private CA
        connection.clientIdentity = ClientIdentity(                                            // mutual TLS
            certificate: URL(fileURLWithPath: "client.pem"), privateKey: URL(fileURLWithPath: "client.key"))
        connection.proxy = .http(URL(string: "http://user:secret@proxy.internal:3128")!)      // or .socks5, .none
        connection.hostOverrides = ["api.example.com:443": "127.0.0.1"]                       // as curl --resolve
        NetworkConfig.shared.connection = connection

        // A daemon on a Unix socket (Docker's API): the socket's path, percent-encoded, is the host.
        NetworkConfig.shared.baseUrl = "http+unix://%2Fvar%2Frun%2Fdocker.sock/v1.43"
        // end snippet
    }

    static func recording(config: NetworkConfig) throws {
        // snippet: README.md
        let recorder = HARRecorder(redaction: .default.adding(jsonFields: ["password"]))
        NetworkConfig.shared.addEventMonitor(recorder)
        // … run the session …
        try recorder.write(to: URL(fileURLWithPath: "session.har"))

        // In tests: no network; a request the file lacks fails, naming itself.
        let agent = NetworkAgent(config: config, transport: try ReplayTransport(har: URL(fileURLWithPath: "session.har")))

        // Bodies compared too; on the first run, what the file lacks is sent for real and added to it.
        let recording = try ReplayTransport(
            har: URL(fileURLWithPath: "session.har"), matching: .methodURLAndBody,
            onMissing: .record(via: CurlTransport(), into: URL(fileURLWithPath: "session.har")))
        // end snippet
        _ = (agent, recording)
    }
}
