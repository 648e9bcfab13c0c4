// BatchAndChain: a chain whose second step is built from the first one's response, and a
// batch of five requests that reports its progress.
//
//     swift run BatchAndChain                            # against the embedded loopback server
//     swift run BatchAndChain --base-url http://host:80  # against any httpbin-compatible server

import Errand
import ErrandTestServer
import Foundation

/// Any path of an httpbin-compatible server, which echoes the query back under `args`.
struct EchoApi: BaseRequest {
    var url: String
    var arguments: [String: any Sendable]?
}

extension Response {
    var args: [String: String] { (jsonObject as? [String: Any])?["args"] as? [String: String] ?? [:] }
}

@main
enum BatchAndChain {
    static func main() async {
        do {
            try await run(arguments: Array(CommandLine.arguments.dropFirst()))
        } catch {
            print("BatchAndChain failed: \(error)")
            exit(1)
        }
    }

    static func run(arguments: [String]) async throws {
        let server = try ExampleServer(arguments: arguments)
        NetworkConfig.shared.baseUrl = server.baseURL
        defer { server.stop() }
        print("Every request below goes to \(NetworkConfig.shared.baseUrl).\n")

        // A chain: the second step needs the first step's answer.
        print("Looking up user ann, then her orders…")
        var chain = ChainRequest()
        chain.add(EchoApi(url: "/anything/users", arguments: ["name": "ann", "id": "42"])) { chain, user in
            let id = user.response?.args["id"] ?? "?"
            chain.add(EchoApi(url: "/anything/orders", arguments: ["userId": id]))
        }
        let steps = try await chain.responses()
        print("  \(steps.count) steps; the orders request asked for userId=\(steps[1].args["userId"] ?? "?").")

        // A batch: five requests at once, with progress as each one finishes.
        print("Fetching five pages at once…")
        let batch = BatchRequest(
            requests: (1...5).map { EchoApi(url: "/anything/pages", arguments: ["page": "\($0)"]) })
        let task: BatchTask = try await withCheckedThrowingContinuation { continuation in
            batch.start(
                progress: { print("  \($0.finished) of \($0.total) finished") },
                success: { continuation.resume(returning: $0) },
                failure: { continuation.resume(throwing: $0.error ?? ErrandError.cancelled) })
        }
        let pages = task.tasks.compactMap { $0.response?.args["page"] }
        print("  Pages in request order: \(pages.joined(separator: ", ")).")
        print("\nDone: a chain of \(steps.count) and a batch of \(pages.count).")
    }
}
