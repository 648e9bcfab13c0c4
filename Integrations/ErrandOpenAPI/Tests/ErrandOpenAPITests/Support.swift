import Errand
import ErrandOpenAPI
import ErrandTestServer
import Foundation
import OpenAPIRuntime

/// A lock around a value, for what tests collect from other threads.
final class Locked<Value>: @unchecked Sendable {  // `lock` guards `value`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try lock.withLock { try body(&value) }
    }
}

/// Records what interceptors and monitors see of each request.
final class Observer: RequestInterceptor, EventMonitor {
    let operationIDs = Locked<[String]>([])
    let finished = Locked<[Result<Int, ErrandError>]>([])
    /// Each request's outcome, as its monitor event arrives.
    let outcomes: AsyncStream<Result<Int, ErrandError>>
    private let outcome: AsyncStream<Result<Int, ErrandError>>.Continuation

    init() {
        (outcomes, outcome) = AsyncStream.makeStream()
    }

    func adapt(_ request: TransportRequest, for task: RequestTask) async throws(ErrandError) -> TransportRequest {
        let id = task.userInfo[ErrandClientTransport.operationIDKey] as? String ?? "none"
        operationIDs.withLock { $0.append(id) }
        return request
    }

    func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
        finished.withLock { $0.append(result.map(\.statusCode)) }
        outcome.yield(result.map(\.statusCode))
    }
}

/// A generated client on an agent of its own, against a fresh test server.
struct Harness {
    let server: TestServer
    let config = NetworkConfig()
    let observer = Observer()
    let agent: NetworkAgent
    let client: Client

    init(transport: (any Transport)? = nil, configure: (NetworkConfig) -> Void = { _ in }) throws {
        server = try TestServer()
        config.addInterceptor(observer)
        config.addEventMonitor(observer)
        configure(config)
        agent = NetworkAgent(config: config, transport: transport)
        guard let serverURL = URL(string: server.baseURL) else { throw URLError(.badURL) }
        client = Client(serverURL: serverURL, transport: ErrandClientTransport(agent: agent))
    }
}

/// Thrown by a request body that fails while it is sent.
struct ProducerFailure: Error, Equatable {}
