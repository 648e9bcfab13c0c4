// swift-format-ignore-file
// (These snippets are the documents' code, line for line: formatted, they would part from it.)
import Errand
import Foundation

private func show<T>(_ value: T) {}
private func report<T>(_ value: T) {}

/// The code the article "Batch and chain" shows, compiled (DocumentedCodeTests checks each snippet is the article's).
enum BatchAndChainSnippets {
    struct UserApi: BaseRequest {
        let id: Int
        var url: String { "/users/\(id)" }
    }
    struct LoginApi: BaseRequest {
        var url: String { "/login" }
        var method: HTTPMethod { .post }
    }
    struct ProfileApi: BaseRequest {
        let token: String
        var url: String { "/profile" }
    }
    final class Bar { var fraction: Double? = 0 }

    static func batches(pages: [any BaseRequest], bar: Bar) async throws {
        // snippet: BatchAndChain.md
        let batch = BatchRequest(requests: [UserApi(id: 1), UserApi(id: 2), UserApi(id: 3)])
        let responses = try await batch.responses()   // in request order
        // end snippet
        // snippet: BatchAndChain.md
        let results = await BatchRequest(requests: pages, runsToEnd: true).results()   // a Result each, in order
        let fetched = results.compactMap { try? $0.get() }
        // end snippet
        // snippet: BatchAndChain.md
        let task = BatchRequest(requests: pages).start(
            progress: { print("\($0.finished) of \($0.total)") },
            success: { task in show(task.tasks.compactMap(\.response)) },
            failure: { task in report(task.failedTask?.error ?? .cancelled) })
        for await progress in task.progressUpdates { bar.fraction = progress.fractionCompleted }
        // end snippet
        _ = (responses, fetched)
    }

    static func chains(pages: [any BaseRequest]) async throws {
        // snippet: BatchAndChain.md
        var chain = ChainRequest()
        chain.add(LoginApi()) { chain, login in
            let token = (login.responseJSONObject as? [String: Any])?["token"] as? String ?? ""
            chain.add(ProfileApi(token: token))
        }
        let responses = try await chain.responses()
        // end snippet
        // snippet: BatchAndChain.md
        var checkout = ChainRequest()
        checkout.add(LoginApi())
        checkout.add(BatchRequest(requests: [UserApi(id: 1), UserApi(id: 2)]))   // a batch as one step
        let everything = BatchRequest(groups: [checkout, BatchRequest(requests: pages)], runsToEnd: true)
        let running = everything.start()
        running.cancel()                                 // everything under it
        NetworkAgent.shared.cancelAllRequests()          // or every request and group of the agent
        // end snippet
        _ = responses
    }

    // snippet: BatchAndChain.md
    final class SignUpViewController: ChainRequestDelegate {
        var message = ""

        func signUp() {
            var chain = ChainRequest()
            chain.add(LoginApi()) { chain, login in
                chain.add(ProfileApi(token: login.responseString ?? ""))
            }
            chain.start(delegate: self)
        }

        func chainRequestFinished(_ task: ChainTask) { message = "signed up" }
        func chainRequestFailed(_ task: ChainTask) {
            message = task.failedTask?.error?.description ?? "cancelled"   // the step that failed
        }
    }
    // end snippet

    // snippet: BatchAndChain.md
    struct GroupLog: RequestGroupAccessory {
        func requestGroupWillStart(_ task: any RequestGroupTask) { print("group started") }
        func requestGroupWillStop(_ task: any RequestGroupTask) { print("group finished") }
        func requestGroupDidStop(_ task: any RequestGroupTask) { print("group callbacks done") }
    }
    // end snippet

    static func accessories() {
        // snippet: BatchAndChain.md
        var batch = BatchRequest(requests: [UserApi(id: 1), UserApi(id: 2)])
        batch.accessories.append(GroupLog())
        // end snippet
        _ = batch
    }
}
