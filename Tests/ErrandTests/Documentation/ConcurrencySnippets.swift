// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

/// The code the article "Concurrency" shows, compiled (DocumentedCodeTests checks each snippet is the article's).
enum ConcurrencySnippets {
    struct GetUserInfoApi: BaseRequest {
        let userId: String
        var url: String { "/users/info" }
        var arguments: [String: any Sendable]? { ["userId": userId] }
    }
    struct User: Decodable { let nick: String }
    struct StatusApi: BaseRequest { var url: String { "/status" } }

    // snippet: Concurrency.md
    @MainActor
    final class ProfileModel {
        var name = ""
        var errorText: String?

        func load() {
            GetUserInfoApi(userId: "42").startOnMainActor(
                success: { task in self.name = task.responseString ?? "" },
                failure: { task in self.errorText = task.error?.description })
        }
    }
    // end snippet

    @MainActor
    final class AwaitingModel {
        var name = ""
        var names: [String] = []
        var errorText: String?

        // snippet: Concurrency.md
        func load() {
            Task {
                do throws(ErrandError) {
                    name = try await GetUserInfoApi(userId: "42").decoded(User.self).nick
                } catch {
                    errorText = error.description
                }
            }
        }
        // end snippet

        func loadTogether() async {
            // snippet: Concurrency.md
            do throws(ErrandError) {
                let batch = BatchRequest(requests: [GetUserInfoApi(userId: "1"), GetUserInfoApi(userId: "2")])
                let responses = try await batch.responses()
                names = try responses.map { response throws(ErrandError) in try response.decode(User.self).nick }
            } catch {
                errorText = error.description   // an ErrandError
            }
            // end snippet
        }

        func loadWithResults() async {
            // snippet: Concurrency.md
            async let first = { () async -> Result<User, ErrandError> in
                do throws(ErrandError) {
                    return .success(try await GetUserInfoApi(userId: "1").decoded(User.self))
                } catch { return .failure(error) }
            }()
            async let second = { () async -> Result<User, ErrandError> in
                do throws(ErrandError) {
                    return .success(try await GetUserInfoApi(userId: "2").decoded(User.self))
                } catch { return .failure(error) }
            }()
            do throws(ErrandError) {
                let (one, two) = await (first, second)
                names = [try one.get().nick, try two.get().nick]
            } catch {
                errorText = error.description   // an ErrandError
            }
            // end snippet
        }
    }

    // snippet: Concurrency.md
    // 1. async/await: an async main, no callbacks at all.
    // end snippet
    // (Its `@main` is left out here: the test runner is the module's entry point.)
    // snippet: Concurrency.md
    struct Tool {
        static func main() async throws {
            let response = try await StatusApi().response()
            print(response.statusCode)
        }
    }
    // end snippet

    static func dispatchMainTool() -> Never {
        // snippet: Concurrency.md
        // 2. dispatchMain() in a main.swift without `await`: the main queue runs; exit from the last callback.
        StatusApi().start(
            success: { task in print(task.responseStatusCode); exit(0) },
            failure: { task in print(task.error?.description ?? ""); exit(1) })
        dispatchMain()
        // end snippet
    }

    static func ownQueueTool() {
        // snippet: Concurrency.md
        // 3. A callback queue of its own; waiting on the main thread is then fine.
        NetworkConfig.shared.callbackQueue = DispatchQueue(label: "callbacks")
        let done = DispatchSemaphore(value: 0)
        StatusApi().start(success: { _ in done.signal() }, failure: { _ in done.signal() })
        done.wait()
        // end snippet
    }

    static func blockingTool() throws {
        // snippet: Concurrency.md
        // 4. Block for the response: no callback, so no queue to wait for.
        let response = try StatusApi().responseSync()
        print(response.statusCode)
        // end snippet
    }

    static func cancelling() {
        // snippet: Concurrency.md
        let task = GetUserInfoApi(userId: "42").start(failure: { task in print(task.error == .cancelled) })
        task.cancel()
        // end snippet
    }
}
