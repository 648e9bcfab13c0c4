// QuickStart: YTKNetwork's basic guide in Swift, written as a script: top-level code that awaits.
//
//     swift run QuickStart                            # against the embedded loopback server
//     swift run QuickStart --base-url http://host:80  # against any httpbin-compatible server
//
// Each API call is one small type; NetworkConfig.shared.baseUrl points them all at a server.

import Errand
import ErrandTestServer
import Foundation

/// POST a registration form. Only what differs from the defaults is written down.
struct RegisterApi: BaseRequest {
    let username: String
    let password: String

    var url: String { "/anything/iphone/register" }
    var method: HTTPMethod { .post }
    var arguments: [String: any Sendable]? { ["username": username, "password": password] }
    // The server echoes the form back; insist it did.
    var jsonValidator: JSONValidator? { ["form": ["username": .string, "password": .string]] }
}

/// GET a user's information, checking the shape of the JSON before anyone reads it, and keeping
/// it for three minutes: a second call meanwhile is answered from the cache.
struct GetUserInfoApi: BaseRequest {
    let userId: String

    var url: String { "/anything/iphone/users" }
    var cacheTimeInSeconds: Int { 3 * CacheLifetime.minute }
    var arguments: [String: any Sendable]? { ["userId": userId] }
    var jsonValidator: JSONValidator? { ["args": ["userId": .string], "method": .string] }
}

/// The same call with a validator the response cannot satisfy, to show what a failure says.
struct GetUserLevelApi: BaseRequest {
    var url: String { "/anything/iphone/users" }
    var arguments: [String: any Sendable]? { ["userId": "1"] }
    var jsonValidator: JSONValidator? { ["args": ["level": .number]] }
}

do {
    let server = try ExampleServer(arguments: Array(CommandLine.arguments.dropFirst()))
    defer { server.stop() }
    NetworkConfig.shared.baseUrl = server.baseURL
    print("Every request below goes to \(NetworkConfig.shared.baseUrl).\n")

    // 1. async/await
    print("Registering user \"ann\" with a POST form…")
    let registered = try await RegisterApi(username: "ann", password: "s3cret").response()
    let form = (registered.jsonObject as? [String: Any])?["form"] as? [String: String] ?? [:]
    print("  The server answered \(registered.statusCode) and received username=\(form["username"] ?? "?").")

    // 2. closures, delivered on the main queue, which runs while this script awaits
    print("Fetching user 42's information with closures…")
    let userId: String = try await withCheckedThrowingContinuation { continuation in
        GetUserInfoApi(userId: "42").start(
            success: { task in
                let args = (task.responseJSONObject as? [String: Any])?["args"] as? [String: String]
                continuation.resume(returning: args?["userId"] ?? "?")
            },
            failure: { task in continuation.resume(throwing: task.error ?? ErrandError.cancelled) })
    }
    print("  The JSON validator passed; the server saw userId=\(userId).")

    // 3. a delegate, as a view controller would use
    print("Fetching user 42's level through a delegate…")
    let delegate = PrintingDelegate()
    await delegate.load(GetUserLevelApi())
    print("  \(delegate.outcome)")

    // 4. the cache
    print("Fetching user 42's information again…")
    let again = try await GetUserInfoApi(userId: "42").response()
    print("  \(again.isDataFromCache ? "Answered from the cache, without a request." : "Sent again.")")
    // The entry reaches the disk just after the response: a script that ends right after its
    // last call waits for it. This one then leaves nothing behind in the user's cache folder.
    await NetworkAgent.shared.waitForCacheWrites()
    try? await NetworkAgent.shared.removeCache(GetUserInfoApi(userId: "42"))

    print("\nDone: four calls, three ways to start them, the last answered from the cache.")
} catch {
    print("QuickStart failed: \(error)")
    exit(1)
}

/// A view-controller-like delegate: main-actor state, told when its request ends.
@MainActor
final class PrintingDelegate: RequestDelegate {
    private(set) var outcome = "no answer yet"
    private var waiter: CheckedContinuation<Void, Never>?

    func load(_ request: any BaseRequest) async {
        await withCheckedContinuation { continuation in
            waiter = continuation
            request.start(delegate: self)
        }
    }

    func requestFinished(_ task: RequestTask) {
        outcome = "Finished with status \(task.responseStatusCode)."
        waiter?.resume()
    }

    func requestFailed(_ task: RequestTask) {
        outcome =
            "Failed as expected, because the server sends no level: \(task.error.map(String.init(describing:)) ?? "?")."
        waiter?.resume()
    }
}
