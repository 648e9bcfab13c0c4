import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one request through a transport and records every event, to check what the transport
/// promises: one head, the body in order, exactly one completion.
final class TransportProbe: Sendable {
    /// What a request reported, once it completed.
    struct Outcome: Sendable {
        var statusCode: Int?
        var headers: [String: String] = [:]
        var body = Data()
        var uploadProgress: [Int64] = []
        var interimStatusCodes: [Int] = []
        /// The trailer fields, and how many times they came.
        var trailers: [String: String] = [:]
        var trailerCount = 0
        var metrics: TransportMetrics?
        var error: ErrandError?
        var headCount = 0
        var completionCount = 0
        /// A body chunk or metrics arrived before the head, or anything after the completion.
        var outOfOrder = false
    }

    private struct State {
        var outcome = Outcome()
        var waiters: [CheckedContinuation<Outcome, Never>] = []
    }

    private let state = Locked(State())
    private let onEvent: @Sendable (TransportEvent) -> Void

    /// `onEvent` runs for each event after it is recorded, on the transport's delivery thread.
    init(onEvent: @escaping @Sendable (TransportEvent) -> Void = { _ in }) {
        self.onEvent = onEvent
    }

    /// Sends `request` through `transport`, recording into this probe.
    /// The transport is kept until the request completes, as an agent keeps its transport.
    func send(_ request: TransportRequest, through transport: any Transport) -> any TransportTask {
        transport.send(request) { [transport] event in
            withExtendedLifetime(transport) { self.record(event) }
        }
    }

    /// The outcome, once the request completed.
    func completion() async -> Outcome {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Outcome? in
                guard state.outcome.completionCount == 0 else { return state.outcome }
                state.waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    /// The outcome so far.
    var outcome: Outcome { state[\.outcome] }

    private func record(_ event: TransportEvent) {
        let waiters = state.withLock { state -> [CheckedContinuation<Outcome, Never>] in
            if state.outcome.completionCount > 0 { state.outcome.outOfOrder = true }
            switch event {
            case .interimHead(let statusCode, _):
                if state.outcome.headCount > 0 { state.outcome.outOfOrder = true }
                state.outcome.interimStatusCodes.append(statusCode)
            case .responseHead(let statusCode, let headers):
                state.outcome.headCount += 1
                state.outcome.statusCode = statusCode
                state.outcome.headers = headers
            case .body(let chunk):
                if state.outcome.headCount == 0 { state.outcome.outOfOrder = true }
                state.outcome.body.append(chunk)
            case .uploadProgress(let sent, _):
                state.outcome.uploadProgress.append(sent)
            case .trailers(let trailers):
                if state.outcome.headCount == 0 { state.outcome.outOfOrder = true }
                state.outcome.trailers = trailers
                state.outcome.trailerCount += 1
            case .metrics(let metrics):
                state.outcome.metrics = metrics
            case .completed(let error):
                state.outcome.completionCount += 1
                state.outcome.error = error
                defer { state.waiters = [] }
                return state.waiters
            }
            return []
        }
        onEvent(event)
        let outcome = self.outcome
        waiters.forEach { $0.resume(returning: outcome) }
    }
}

extension TransportProbe.Outcome {
    /// The body as a JSON object, or an empty one.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:]
    }

    /// The echoed request headers of an httpbin echo.
    var echoedHeaders: [String: String] {
        json["headers"] as? [String: String] ?? [:]
    }

    /// The `URLError` code of a transport failure.
    var urlErrorCode: URLError.Code? {
        if case .transport(let error) = error { return error.code }
        return nil
    }
}

extension TransportRequest {
    /// A request to `path` on the shared loopback server.
    static func loopback(_ path: String, method: String = "GET", body: Data? = nil) throws -> TransportRequest {
        let server = try #require(loopbackServer, "the loopback server did not start")
        return TransportRequest(url: try #require(URL(string: server.baseURL + path)), method: method, body: body)
    }
}

/// The transports every parity test runs under.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case curl
    /// CurlTransport on the loop of platforms without epoll: `curl_multi_perform` and `curl_multi_poll`.
    case curlPollLoop
    /// URLSessionTransport with every request it can send on its session, as on Apple platforms:
    /// on Linux it would send them through libcurl.
    case urlSession

    func make(configuration: URLSessionConfiguration = .default) -> any Transport {
        switch self {
        case .curl: CurlTransport(configuration: configuration)
        case .curlPollLoop:
            CurlTransport(configuration: configuration, bufferLimit: 1 << 20, calls: .libcurl, watchesSockets: false)
        case .urlSession:
            URLSessionTransport(
                configuration: configuration, connection: .init(), serverTrust: .system,
                plainRequestsThroughLibcurl: false)
        }
    }

    var testDescription: String { rawValue }
}
