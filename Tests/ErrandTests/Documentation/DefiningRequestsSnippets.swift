// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
// snippet: GettingStarted.md
import Errand
// end snippet
import Foundation

/// The code the articles "Errand", "Getting started" and "Defining requests" show, compiled
/// (DocumentedCodeTests checks each snippet is its article's).
enum DefiningRequestsSnippets {
    enum Overview {
        // snippet: Errand.md
        struct GetUserInfoApi: BaseRequest {
            let userId: String
            var url: String { "/users/info" }
            var arguments: [String: any Sendable]? { ["userId": userId] }
            var jsonValidator: JSONValidator? { ["nick": .string, "level": .number] }
        }
        // end snippet

        static func send() async throws {
            // snippet: Errand.md
            NetworkConfig.shared.baseUrl = "https://api.example.com"
            let response = try await GetUserInfoApi(userId: "42").response()
            // end snippet
            _ = response
        }
    }

    enum GettingStarted {
        // snippet: GettingStarted.md
        struct GetUserInfoApi: BaseRequest {
            let userId: String
            var url: String { "/users/info" }
            var arguments: [String: any Sendable]? { ["userId": userId] }
            var jsonValidator: JSONValidator? { ["nick": .string, "level": .number] }
        }
        // end snippet
        struct User: Decodable { let nick: String }

        static func send() async throws {
            // snippet: GettingStarted.md
            NetworkConfig.shared.baseUrl = "https://api.example.com"
            // end snippet
            // snippet: GettingStarted.md
            do {
                let response = try await GetUserInfoApi(userId: "42").response()
                let user = try response.decode(User.self)
                print(user.nick)
            } catch {
                print(error)  // error is an ErrandError: response() uses typed throws
            }
            // end snippet
            // snippet: GettingStarted.md
            let user = try await GetUserInfoApi(userId: "42").decoded(User.self)
            // end snippet
            // snippet: GettingStarted.md
            GetUserInfoApi(userId: "42").start(
                success: { task in print(task.responseStatusCode, task.responseJSONObject ?? "") },
                failure: { task in print(task.error.map(String.init(describing:)) ?? "") })
            // end snippet
            // snippet: GettingStarted.md
            NetworkConfig.shared.debugLogEnabled = true
            // [Errand] GET https://api.example.com/users/info?userId=42 → 200, 31.4 ms, 512 bytes
            // end snippet
            _ = user
        }
    }
    // snippet: DefiningRequests.md
    struct RegisterApi: BaseRequest {
        let username: String
        let password: String

        var url: String { "/users/register" }
        var method: HTTPMethod { .post }
        var arguments: [String: any Sendable]? { ["username": username, "password": password] }
    }
    // end snippet

    final class SignUpScreen: RequestDelegate {
        var status = ""

        func start() async throws {
            // snippet: DefiningRequests.md
            // async/await; cancelling the Swift task cancels the request.
            let response = try await RegisterApi(username: "ann", password: "s3cret").response()
            // end snippet
            _ = response
            // snippet: DefiningRequests.md
            // closures, on NetworkConfig.callbackQueue
            RegisterApi(username: "ann", password: "s3cret").start(
                success: { task in print(task.responseStatusCode) },
                failure: { task in print(task.error as Any) })

            // a delegate, held weakly, called on the main actor
            RegisterApi(username: "ann", password: "s3cret").start(delegate: self)

            // main-actor closures, whatever the callback queue
            RegisterApi(username: "ann", password: "s3cret").startOnMainActor(
                success: { task in self.status = "registered" })

            // any start returns the task: a tag and user info tell it apart, cancel() ends it
            let task = RegisterApi(username: "ann", password: "s3cret").start(tag: 7, userInfo: ["screen": "sign-up"], delegate: self)
            task.cancel()   // requestFailed runs, with .cancelled
            // end snippet
        }

        func requestFinished(_ task: RequestTask) {}
        func requestFailed(_ task: RequestTask) {}
    }

    // snippet: DefiningRequests.md
    final class RegisterViewController: RequestDelegate {
        var status = ""

        func register() {
            RegisterApi(username: "ann", password: "s3cret").start(delegate: self)
        }

        func requestFinished(_ task: RequestTask) { status = "registered" }
        func requestFailed(_ task: RequestTask) { status = task.error?.description ?? "failed" }

        // Optional, as is request(_:didUpdateDownloadProgress:).
        func request(_ task: RequestTask, didUpdateUploadProgress progress: TransferProgress) {
            status = "\(progress.completedBytes) bytes sent"
        }
    }
    // end snippet

    static func stub() {
        // snippet: DefiningRequests.md
        let agent = NetworkAgent(transport: StubTransport { request in
            Response(statusCode: 200, data: Data(#"{"nick":"ann","level":3}"#.utf8))
        })
        // end snippet
        _ = agent
    }
}
