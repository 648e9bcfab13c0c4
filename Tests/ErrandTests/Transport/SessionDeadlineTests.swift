import ErrandScenarios
import ErrandTestServer
import Foundation
import Testing

@testable import Errand

#if canImport(FoundationNetworking)
    import FoundationNetworking

    /// URLSessionTransport's resource deadline holds however late FoundationNetworking starts the
    /// request. Every URLSession of a process runs on one queue there, so a busy one — thousands
    /// of header fields, a delegate behind — delays the start of every other session's tasks.
    @Suite("URLSessionTransport: the resource deadline")
    struct SessionDeadlineTests {
        private static let childVariable = "ERRAND_SESSION_DEADLINE_CHILD_URL"
        private static let marker = "deadline-outcome: "
        /// How long the child holds FoundationNetworking's queue: longer than the deadline.
        private static let jam: TimeInterval = 3
        private static let deadline: TimeInterval = 1
        /// The server's delay: long enough that an answer is no deadline's doing.
        private static let delay = 8

        private struct SlowRequest: BaseRequest {
            let url: String
            var timeoutIntervalForResource: TimeInterval? { SessionDeadlineTests.deadline }
        }

        /// An OperationQueue whose first `addOperation` — called on FoundationNetworking's shared
        /// queue — waits `jam` seconds, as a delegate queue that is behind does.
        private final class JammedQueue: OperationQueue, @unchecked Sendable {  // Sendable: `jammed` is a semaphore.
            let jammed = DispatchSemaphore(value: 0)
            private let once = Locked(true)

            override func addOperation(_ block: @escaping @Sendable () -> Void) {
                if once.withLock({ first in
                    defer { first = false }
                    return first
                }) {
                    jammed.signal()
                    Thread.sleep(forTimeInterval: SessionDeadlineTests.jam)
                }
                super.addOperation(block)
            }
        }

        /// The child's part of ``aDeadlineThatPassesBeforeFoundationNetworkingStartsTheRequestStillEndsIt()``:
        /// holds FoundationNetworking's queue, sends a slow request meanwhile, prints how it ended.
        @Test(.enabled(if: ProcessInfo.processInfo.environment[Self.childVariable] != nil))
        func childSendsASlowRequestWhileFoundationNetworkingIsBusy() async throws {
            let url = try #require(ProcessInfo.processInfo.environment[Self.childVariable])
            let queue = JammedQueue()
            let busy = URLSession(configuration: .ephemeral, delegate: nil, delegateQueue: queue)
            busy.getAllTasks { _ in }
            try await onOwnThread { queue.jammed.wait() }
            let config = NetworkConfig()
            config.callbackQueue = DispatchQueue(label: "errand.session-deadline-tests.callbacks")
            let request = SlowRequest(url: url + "/delay/\(Self.delay)")
            let started = ContinuousClock.now
            // On the session itself, where FoundationNetworking makes and starts the task.
            let transport = URLSessionTransport(
                configuration: .default, connection: .init(), serverTrust: .system, plainRequestsThroughLibcurl: false)
            let task = await NetworkAgent(config: config, transport: transport).finishedTask(request)
            let seconds = (ContinuousClock.now - started) / .seconds(1)
            FileHandle.standardOutput.write(
                Data("\(Self.marker)\(String(describing: task.error)) after \(Int(seconds)) s\n".utf8))
        }

        @Test func aDeadlineThatPassesBeforeFoundationNetworkingStartsTheRequestStillEndsIt() async throws {
            let server = try TestServer()
            defer { server.stop() }
            let ending = try await ChildTest.run(
                "childSendsASlowRequestWhileFoundationNetworkingIsBusy",
                environment: [Self.childVariable: server.baseURL])
            #expect(ending.status == 0, "the child failed: \(ending.tail)")
            let outcome = try #require(ending.line(after: Self.marker), "the child said nothing: \(ending.tail)")
            // The deadline ends it once FoundationNetworking is free again, not the server's answer.
            #expect(outcome.hasPrefix("Optional(\(ErrandError.timedOut))"), "\(outcome)")
        }
    }
#endif
