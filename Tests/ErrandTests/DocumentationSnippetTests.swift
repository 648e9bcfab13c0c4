import Errand
import Foundation
import Testing

/// From "Concurrency": a main-actor model awaiting from a `Task`; `error` is an `ErrandError`.
@MainActor
final class AwaitingProfileModel {
    var name = ""
    var errorText: String?

    func load(with agent: NetworkAgent) async {
        let loading = Task {
            do throws(ErrandError) {
                name = try await agent.decoded(
                    DocumentationSnippetTests.GetUserInfoApi(userId: "42"), DocumentationSnippetTests.User.self
                ).nick
            } catch {
                errorText = error.description
            }
        }
        await loading.value
    }
}

/// The code the DocC articles show, compiled and run against stubs, so the articles stay true.
@Suite("Documentation snippets")
struct DocumentationSnippetTests {
    struct User: Decodable {
        let nick: String
        let level: Int
    }

    struct GetUserInfoApi: BaseRequest {
        let userId: String
        var url: String { "/users/info" }
        var arguments: [String: any Sendable]? { ["userId": userId] }
        var jsonValidator: JSONValidator? { ["nick": .string, "level": .number] }
    }

    /// From "Configuration and test servers".
    struct ChannelFilter: URLFilter {
        let channel: String
        func filterUrl(_ originUrl: String, request: any BaseRequest) -> String {
            originUrl + (originUrl.contains("?") ? "&" : "?") + "channel=\(channel)"
        }
    }

    func agent(_ respond: @escaping StubTransport.Responder) -> NetworkAgent {
        let config = NetworkConfig()
        config.baseUrl = "https://api.example.com"
        config.callbackQueue = DispatchQueue(label: "snippets")
        return NetworkAgent(config: config, transport: StubTransport(respond: respond))
    }

    /// From "Connections": options set once, and a Docker-style request under an `http+unix` base.
    @Test func connectionOptionsAndAUnixSocketBase() throws {
        var connection = ConnectionOptions()
        connection.trustedRoots = .adding([URL(fileURLWithPath: "/etc/company/root-ca.pem")])
        connection.proxy = .http(URL(string: "http://proxy.internal:3128")!)
        connection.hostOverrides = ["api.example.com:443": "127.0.0.1"]
        let config = NetworkConfig()
        config.connection = connection
        #expect(config.connection == connection)

        let socket = "/var/run/docker.sock".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        config.baseUrl = "http+unix://\(socket)/v1.43"
        struct ListContainers: BaseRequest {
            var url: String { "containers/json" }
        }
        let agent = NetworkAgent(config: config, transport: StubTransport { _ in Response(statusCode: 200) })
        #expect(
            try agent.buildRequestUrl(ListContainers()).absoluteString
                == "http+unix://%2Fvar%2Frun%2Fdocker%2Esock/v1.43/containers/json")
    }

    /// From "Testing your API layer".
    @Test func stubTransportSeesTheRequestAsSent() async throws {
        let agent = agent { request in
            #expect(request.method == "GET")
            #expect(request.url.query == "userId=42")
            return Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8))
        }
        let user = try await agent.decoded(GetUserInfoApi(userId: "42"), User.self)
        #expect(user.nick == "ann")
        let task = agent.start(GetUserInfoApi(userId: "42"))
        #expect(try await task.value.statusCode == 200)
    }

    /// From "Validation and errors": typed throws, a case pattern in `catch`, a switch in the rest.
    @Test func typedThrowsSwitchesWithoutCasts() async {
        func outcome(of agent: NetworkAgent) async -> String {
            do {
                let user = try await agent.decoded(GetUserInfoApi(userId: "42"), User.self)
                return "user \(user.nick)"
            } catch .statusCode(404) {
                return "not found"
            } catch {
                switch error {
                case .transport, .timedOut: return "offline"
                case .cancelled: return "cancelled"
                case .api(let apiError): return apiError.message
                default: return error.description
                }
            }
        }
        #expect(await outcome(of: agent { _ in Response(statusCode: 404, data: Data("<html>".utf8)) }) == "not found")
        #expect(
            await outcome(of: agent { _ throws(ErrandError) in throw .transport(URLError(.notConnectedToInternet)) })
                == "offline")
        #expect(
            await outcome(of: agent { _ in Response(statusCode: 200, data: Data(#"{"nick":"ann"}"#.utf8)) })
                == "JSON validation failed at $.level: expected number, found missing")
    }

    /// From "Configuration and test servers": the URL without the arguments, and a filter.
    @Test func buildRequestUrlLeavesOutTheArgumentsAndFiltersRun() async throws {
        let agent = agent { request in
            #expect(request.url.absoluteString == "https://api.example.com/users/info?channel=appstore&userId=42")
            return Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8))
        }
        #expect(
            try agent.buildRequestUrl(GetUserInfoApi(userId: "42")).absoluteString
                == "https://api.example.com/users/info")
        agent.config.addUrlFilter(ChannelFilter(channel: "appstore"))
        _ = try await agent.response(GetUserInfoApi(userId: "42"))
    }

    @Test @MainActor func aMainActorModelAwaitsFromATask() async {
        let model = AwaitingProfileModel()
        await model.load(with: agent { _ in Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8)) })
        #expect(model.name == "ann")
        await model.load(with: agent { _ in Response(statusCode: 500) })
        #expect(model.errorText == "Unacceptable HTTP status code 500")
    }

    /// From "Migrating from YTKNetwork": a batch with `async let`.
    @Test func asyncLetRunsRequestsTogether() async throws {
        let agent = agent { _ in Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8)) }
        async let first = agent.response(GetUserInfoApi(userId: "1"))
        async let second = agent.response(GetUserInfoApi(userId: "2"))
        let (one, two) = try await (first, second)
        #expect(one.statusCode == 200 && two.statusCode == 200)
    }
}

/// A file URL in a fresh temporary folder that does not exist yet.
private func missingFolder() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("errand-snippets-\(UUID().uuidString)")
}

extension DocumentationSnippetTests {
    /// From "Caching responses": the async overloads, picked by `await`.
    @Test func signingOutClearsTheAccountsFolder() async throws {
        struct FeedApi: BaseRequest {
            var url: String { "/feed" }
            // An hour rather than the article's five minutes: beside the whole suite under the
            // sanitizer, its steps have been minutes apart.
            var cacheTimeInSeconds: Int { 3600 }
        }
        func signOut(agent: NetworkAgent, account: URL) async {
            await agent.clearCache(in: account)
            await agent.waitForCacheWrites()
        }
        let agent = agent { _ in Response(statusCode: 200, data: Data("{}".utf8)) }
        agent.config.cacheDirectory = missingFolder()
        defer { try? FileManager.default.removeItem(at: agent.config.cacheDirectory) }
        _ = try await agent.response(FeedApi())
        await agent.waitForCacheWrites()
        #expect(try agent.loadCache(FeedApi()).isDataFromCache)
        await signOut(agent: agent, account: agent.config.cacheDirectory)
        #expect(throws: ErrandError.cacheMiss(.missing)) { try agent.loadCache(FeedApi()) }
    }
}

/// Waits on the main actor until `condition` holds, for at most 10 seconds; the test then checks it.
@MainActor
private func waitUntil(_ condition: () -> Bool) async throws {
    let deadline = Date(timeIntervalSinceNow: 10)
    while !condition(), Date() < deadline {
        try await Task.sleep(nanoseconds: 5_000_000)
    }
}

extension DocumentationSnippetTests {
    struct RegisterApi: BaseRequest {
        let username: String
        let password: String
        var url: String { "/users/register" }
        var method: HTTPMethod { .post }
        var arguments: [String: any Sendable]? { ["username": username, "password": password] }
    }

    /// From "Defining requests": a delegate implements both required methods; progress is optional.
    final class RegisterViewController: RequestDelegate {
        let agent: NetworkAgent
        var status = ""

        init(agent: NetworkAgent) { self.agent = agent }

        func register() {
            agent.start(RegisterApi(username: "ann", password: "s3cret"), delegate: self)
        }

        func requestFinished(_ task: RequestTask) { status = "registered" }
        func requestFailed(_ task: RequestTask) { status = task.error?.description ?? "failed" }

        // Optional, as is request(_:didUpdateDownloadProgress:).
        func request(_ task: RequestTask, didUpdateUploadProgress progress: TransferProgress) {
            status = "\(progress.completedBytes) bytes sent"
        }
    }

    @Test @MainActor func aRequestDelegateImplementsFinishedAndFailed() async throws {
        let controller = RegisterViewController(agent: agent { _ in Response(statusCode: 200, data: Data("{}".utf8)) })
        controller.register()
        try await waitUntil { controller.status == "registered" }
        #expect(controller.status == "registered")

        let refused = RegisterViewController(agent: agent { _ in Response(statusCode: 500) })
        refused.register()
        try await waitUntil { refused.status.hasPrefix("Unacceptable") }
        #expect(refused.status == "Unacceptable HTTP status code 500")
    }

    struct LoginApi: BaseRequest {
        var url: String { "/login" }
        var method: HTTPMethod { .post }
        var responseSerializerType: ResponseSerializerType { .string }
    }

    struct ProfileApi: BaseRequest {
        let token: String
        var url: String { "/profile" }
        var headers: [String: String] { ["Authorization": "Bearer \(token)"] }
    }

    struct UserApi: BaseRequest {
        let id: Int
        var url: String { "/users/\(id)" }
    }

    /// From "Batch and chain": a chain's delegate; the failed member is on the task.
    final class SignUpViewController: ChainRequestDelegate {
        let agent: NetworkAgent
        var message = ""

        init(agent: NetworkAgent) { self.agent = agent }

        func signUp() {
            var chain = ChainRequest(agent: agent)
            chain.add(LoginApi()) { chain, login in
                chain.add(ProfileApi(token: login.responseString ?? ""))
            }
            chain.start(delegate: self)
        }

        func chainRequestFinished(_ task: ChainTask) { message = "signed up" }
        func chainRequestFailed(_ task: ChainTask) {
            message = task.failedTask?.error?.description ?? "cancelled"  // the step that failed
        }
    }

    @Test @MainActor func aChainDelegateFindsTheFailedStepOnTheTask() async throws {
        let succeeding = SignUpViewController(
            agent: agent { request in
                request.url.path == "/login"
                    ? Response(statusCode: 200, data: Data("t0ken".utf8))
                    : Response(
                        statusCode: request.value(forHeader: "Authorization") == "Bearer t0ken" ? 200 : 401,
                        data: Data("{}".utf8))
            })
        succeeding.signUp()
        try await waitUntil { !succeeding.message.isEmpty }
        #expect(succeeding.message == "signed up")

        let failing = SignUpViewController(agent: agent { _ in Response(statusCode: 403) })
        failing.signUp()
        try await waitUntil { !failing.message.isEmpty }
        #expect(failing.message == "Unacceptable HTTP status code 403")
    }

    /// From "Batch and chain": a group accessory implements all three methods.
    struct GroupLog: RequestGroupAccessory {
        func requestGroupWillStart(_ task: any RequestGroupTask) { print("group started") }
        func requestGroupWillStop(_ task: any RequestGroupTask) { print("group finished") }
        func requestGroupDidStop(_ task: any RequestGroupTask) { print("group callbacks done") }
    }

    @Test func aGroupAccessoryIsAddedToTheGroupsAccessories() async throws {
        var batch = BatchRequest(
            requests: [UserApi(id: 1), UserApi(id: 2)], agent: agent { _ in Response(statusCode: 200) })
        batch.accessories.append(GroupLog())
        #expect(try await batch.responses().count == 2)
    }

    /// From "Downloads and uploads": every kind of multipart part.
    struct PostPhotoApi: BaseRequest {
        let photo: URL  // beach.jpg on disk
        let thumbnail: Data  // PNG bytes in memory
        var url: String { "/photos" }
        var method: HTTPMethod { .post }
        var constructingBody: (@Sendable (inout MultipartFormData) -> Void)? {
            { [photo, thumbnail] form in
                form.append("A holiday", name: "title")  // a text field
                form.append(photo, name: "photo")  // filename beach.jpg, image/jpeg
                form.append(thumbnail, name: "thumb", fileName: "thumb.png")  // image/png, from the file name
                form.append(thumbnail, name: "preview", fileName: "preview", mimeType: "image/png")
            }
        }
    }

    @Test func multipartPartsGetTheirFileNamesAndTypes() async throws {
        let folder = missingFolder()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathComponent("beach.jpg")
        try Data("JPEG".utf8).write(to: photo)
        let agent = agent { request in
            let body = String(decoding: request.body ?? Data(), as: UTF8.self)
            #expect(body.contains("name=\"title\"\r\n\r\nA holiday\r\n"))
            #expect(body.contains("name=\"photo\"; filename=\"beach.jpg\"\r\nContent-Type: image/jpeg\r\n\r\nJPEG\r\n"))
            #expect(body.contains("name=\"thumb\"; filename=\"thumb.png\"\r\nContent-Type: image/png\r\n"))
            #expect(body.contains("name=\"preview\"; filename=\"preview\"\r\nContent-Type: image/png\r\n"))
            return Response(statusCode: 200, data: Data("{}".utf8))
        }
        _ = try await agent.response(PostPhotoApi(photo: photo, thumbnail: Data("PNG".utf8)))
    }

    /// From "Downloads and uploads": a path ending in "/" is a folder, created when missing.
    @Test func aDownloadFolderIsCreatedWhenMissing() async throws {
        struct VideoApi: BaseRequest {
            let videosFolder: URL
            var url: String { "/videos/42.mp4" }
            var resumableDownloadPath: String? { videosFolder.path + "/" }  // a directory: the file is 42.mp4
        }
        let videosFolder = missingFolder().appendingPathComponent("videos")
        defer { try? FileManager.default.removeItem(at: videosFolder.deletingLastPathComponent()) }
        let agent = agent { _ in Response(statusCode: 200, headers: ["Content-Length": "4"], data: Data("MP4!".utf8)) }
        let response = try await agent.response(VideoApi(videosFolder: videosFolder))
        #expect(response.fileURL?.path == videosFolder.appendingPathComponent("42.mp4").path)
        #expect(try Data(contentsOf: videosFolder.appendingPathComponent("42.mp4")) == Data("MP4!".utf8))
    }

    /// From "Validation and errors": YTKNetwork's validator samples in Errand's literals.
    @Test func arrayAndNestedValidatorsMatchYTKNetworksSamples() throws {
        let user: JSONValidator = ["nick": .string, "level": .number]
        let names: JSONValidator = [.string]  // .array(.string)
        let questions: JSONValidator = [
            [
                "id": .number,
                "imageId": .string,
                "time": .number,
                "status": .number,
                "question": ["id": .number, "content": .string, "contentType": .number],
            ]
        ]
        #expect(names == .array(.string))
        #expect(user.validate(["nick": "ann", "level": 3]) == nil)
        #expect(names.validate(["a", "b"]) == nil)
        let json =
            #"[{"id": 1, "imageId": "i", "time": 2, "status": 0, "question": {"id": 3, "content": 7, "contentType": 1}}]"#
        let parsed = try JSONSerialization.jsonObject(with: Data(json.utf8))
        #expect(
            questions.validate(parsed)
                == .jsonValidation(path: "$[0].question.content", expected: "string", found: "number"))
        #expect(([.string, .number] as JSONValidator) == .array(.string))
    }
}

extension DocumentationSnippetTests {
    /// From "Migrating from YTKNetwork": YTKNetwork's chainRequestFailed:failedBaseRequest:, ported.
    final class PortedSignUpViewController: ChainRequestDelegate {
        var message = ""

        func chainRequestFinished(_ task: ChainTask) { message = "signed up" }

        // YTKNetwork: - (void)chainRequestFailed:(YTKChainRequest *)chainRequest
        //                       failedBaseRequest:(YTKBaseRequest *)request
        func chainRequestFailed(_ task: ChainTask) {
            let failed = task.failedTask  // nil when the chain was cancelled before a step failed
            message = failed?.error?.description ?? "cancelled"
        }
    }

    @Test @MainActor func aPortedChainDelegateFindsTheFailedStepOnTheTask() async throws {
        let ported = PortedSignUpViewController()
        var chain = ChainRequest(agent: agent { _ in Response(statusCode: 404) })
        chain.add(LoginApi())
        let task = chain.start(delegate: ported)
        try await waitUntil { !ported.message.isEmpty }
        #expect(ported.message == "Unacceptable HTTP status code 404")
        #expect(task.failedTask?.error == .statusCode(404))
    }
}

/// From "Concurrency": requests run together with their error type kept.
@MainActor
final class TogetherModel {
    var names: [String] = []
    var errorText: String?

    func loadAsBatch(with agent: NetworkAgent) async {
        typealias GetUserInfoApi = DocumentationSnippetTests.GetUserInfoApi
        typealias User = DocumentationSnippetTests.User
        do throws(ErrandError) {
            let batch = BatchRequest(
                requests: [GetUserInfoApi(userId: "1"), GetUserInfoApi(userId: "2")], agent: agent)
            let responses = try await batch.responses()
            names = try responses.map { response throws(ErrandError) in try response.decode(User.self).nick }
        } catch {
            errorText = error.description  // an ErrandError
        }
    }

    func loadWithAsyncLet(with agent: NetworkAgent) async {
        typealias GetUserInfoApi = DocumentationSnippetTests.GetUserInfoApi
        typealias User = DocumentationSnippetTests.User
        async let first = { () async -> Result<User, ErrandError> in
            do throws(ErrandError) {
                return .success(try await agent.decoded(GetUserInfoApi(userId: "1"), User.self))
            } catch { return .failure(error) }
        }()
        async let second = { () async -> Result<User, ErrandError> in
            do throws(ErrandError) {
                return .success(try await agent.decoded(GetUserInfoApi(userId: "2"), User.self))
            } catch { return .failure(error) }
        }()
        do throws(ErrandError) {
            let (one, two) = await (first, second)
            names = [try one.get().nick, try two.get().nick]
        } catch {
            errorText = error.description  // an ErrandError
        }
    }
}

extension DocumentationSnippetTests {
    @Test @MainActor func asyncLetKeepsTheErrorTypeThroughABatchOrResults() async {
        let agent = agent { request in
            let id = request.url.query == "userId=1" ? "ann" : "bob"
            return Response(statusCode: 200, data: Data(#"{"nick":"\#(id)","level":3}"#.utf8))
        }
        let batched = TogetherModel()
        await batched.loadAsBatch(with: agent)
        #expect(batched.names == ["ann", "bob"])
        let paired = TogetherModel()
        await paired.loadWithAsyncLet(with: agent)
        #expect(paired.names == ["ann", "bob"])

        let failing = TogetherModel()
        await failing.loadWithAsyncLet(with: self.agent { _ in Response(statusCode: 404) })
        #expect(failing.errorText == "Unacceptable HTTP status code 404")
    }
}
