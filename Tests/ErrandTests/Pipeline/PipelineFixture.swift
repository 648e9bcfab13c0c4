import ErrandTestServer
import Foundation
import Testing

@testable import Errand

/// A loopback server, and agents whose retries wait on a clock the test controls.
struct PipelineFixture {
    let server: TestServer
    let config: NetworkConfig
    let timer = ManualRetryTimer()

    init() throws {
        server = try TestServer()
        config = NetworkConfig()
        config.baseUrl = server.baseURL
        config.callbackQueue = DispatchQueue(label: "errand.pipeline-tests.callbacks")
    }

    /// An agent whose retry waits fire only when ``ManualRetryTimer/fireAll()`` says so.
    func makeAgent(transport: (any Transport)? = nil) -> NetworkAgent {
        NetworkAgent(config: config, transport: transport, retryTimer: timer.retryTimer)
    }

    /// An agent whose retry waits run on the real clock.
    func makeRealTimeAgent() -> NetworkAgent {
        NetworkAgent(config: config)
    }
}

/// Retry waits that run when the test says, recording how long each asked to wait.
final class ManualRetryTimer: Sendable {
    private struct Wait {
        let seconds: TimeInterval
        let work: @Sendable () -> Void
        var cancelled = false
    }

    private struct State {
        var waits: [Wait] = []
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    var retryTimer: RetryTimer {
        RetryTimer { [self] seconds, work in
            let (index, due) = state.withLock { state in
                state.waits.append(Wait(seconds: seconds, work: work))
                let count = state.waits.count
                let due = state.watchers.filter { $0.count <= count }.map(\.continuation)
                state.watchers.removeAll { $0.count <= count }
                return (count - 1, due)
            }
            due.forEach { $0.resume() }
            return { [self] in state.withLock { $0.waits[index].cancelled = true } }
        }
    }

    /// How many waits were asked for and neither run nor cancelled.
    var pendingCount: Int { state.withLock { $0.waits.filter { !$0.cancelled }.count } }

    /// The delays asked for so far, in order.
    var requestedDelays: [TimeInterval] { state.withLock { $0.waits.map(\.seconds) } }

    /// Runs every wait not yet run or cancelled.
    func fireAll() {
        let due = state.withLock { state -> [@Sendable () -> Void] in
            defer {
                state.waits = state.waits.map {
                    var wait = $0; wait.cancelled = true; return wait
                }
            }
            return state.waits.filter { !$0.cancelled }.map(\.work)
        }
        due.forEach { $0() }
    }

    /// Returns once `count` waits were asked for.
    func waitForRequests(_ count: Int) async {
        await withCheckedContinuation { continuation in
            let reached = state.withLock { state in
                guard state.waits.count < count else { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
}
