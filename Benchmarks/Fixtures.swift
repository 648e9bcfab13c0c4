import Errand
import Foundation

/// The body the stub transport answers with: small, so parsing it costs next to nothing and
/// what remains is the framework's own work.
let smallJSON = Data(#"{"nick":"ann","level":3}"#.utf8)

/// A typical API call: a path, two arguments and the JSON shape it expects back.
struct UserInfoRequest: BaseRequest {
    var url: String { "/users/info" }
    var arguments: [String: any Sendable]? { ["userId": 42, "fields": "nick,level"] }
    var jsonValidator: JSONValidator? { ["nick": .string, "level": .number] }
}

/// ``UserInfoRequest`` cached for an hour, as a profile screen would be.
struct CachedUserInfoRequest: BaseRequest {
    var url: String { "/users/info" }
    var arguments: [String: any Sendable]? { ["userId": 42, "fields": "nick,level"] }
    var jsonValidator: JSONValidator? { ["nick": .string, "level": .number] }
    var cacheTimeInSeconds: Int { 3600 }
}

/// A search with ten arguments of mixed types, several of which need percent-encoding;
/// without them it is otherwise the same request, so the difference is the arguments' cost.
struct SearchRequest: BaseRequest {
    var withArguments = true

    var url: String { "/v2/search" }
    var arguments: [String: any Sendable]? {
        guard withArguments else { return nil }
        return [
            "q": "swift http client", "page": 3, "perPage": 50, "sort": "updated", "order": "desc",
            "lang": "zh-Hans", "since": 1_700_000_000, "minScore": 0.75, "includeForks": false,
            "tag": "networking & caching/ios",
        ]
    }
    var jsonValidator: JSONValidator? { ["nick": .string, "level": .number] }
}

/// httpbin's `GET /get`, as served by the embedded test server.
struct HTTPBinGet: BaseRequest {
    var url: String { "/get" }
    // A hung request fails the benchmark in seconds instead of the default minute.
    var timeoutInterval: TimeInterval { 10 }
}

/// An agent whose transport answers at once from memory, so everything measured is Errand.
///
/// Callbacks go to a private queue: the default, the main queue, is not serviced by a
/// command-line program that never calls `dispatchMain()`.
func makeStubAgent() -> NetworkAgent {
    let config = NetworkConfig()
    config.baseUrl = "https://api.example.com/v1"
    config.callbackQueue = DispatchQueue(label: "ErrandBenchmarks.stub.callbacks")
    let agent = NetworkAgent(
        config: config,
        transport: StubTransport { _ in
            Response(statusCode: 200, headers: ["Content-Type": "application/json"], data: smallJSON)
        })
    agent.maxConcurrentRequests = 16
    return agent
}

extension NetworkAgent {
    /// Starts `request` and reports only whether it succeeded, as ``Load`` wants.
    func start(_ request: any BaseRequest, outcome done: @escaping Outcome) {
        start(
            request, success: { _ in done(nil) },
            failure: { task in done("\(type(of: request)) failed: \(task.error.map { "\($0)" } ?? "no error recorded")")
            })
    }
}
