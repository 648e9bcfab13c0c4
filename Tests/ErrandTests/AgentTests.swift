import Errand
import Foundation
import Testing

@Suite("NetworkAgent: queueing, priorities, cancellation, callbacks")
struct AgentTests {
    struct Request: BaseRequest {
        var url: String
        var priority: RequestPriority = .default
        init(_ url: String, priority: RequestPriority = .default) {
            self.url = url
            self.priority = priority
        }
    }

    let transport = ManualTransport()
    let callbackQueue = DispatchQueue(label: "errand.tests.callbacks")
    let agent: NetworkAgent

    init() {
        agent = NetworkAgent.testing(transport, callbackQueue: callbackQueue)
    }

    /// Starts `request` and returns its task together with a wait for its one callback.
    func start(_ request: any BaseRequest) -> (RequestTask, Callback) {
        let callback = Callback()
        let task = agent.start(
            request, success: { callback.record($0, succeeded: true) },
            failure: { callback.record($0, succeeded: false) })
        return (task, callback)
    }

    @Test func queuedRequestsStartByPriorityThenArrival() async {
        agent.maxConcurrentRequests = 1
        let (_, blocker) = start(Request("/blocker"))
        let order = [
            ("/low", RequestPriority.low), ("/default", .default), ("/high1", .high), ("/high2", .high),
            ("/low2", .low),
        ]
        let callbacks = order.map { start(Request($0.0, priority: $0.1)).1 }
        #expect(transport.sentPaths == ["/blocker"])
        // Each finished request frees the one slot, and the next one starts on another thread.
        for index in 0..<6 {
            guard let sent = await transport.sent(count: index + 1) else {
                Issue.record("request \(index + 1) was never sent")
                return
            }
            sent[index].respond()
        }
        _ = await blocker.outcome()
        for callback in callbacks { _ = await callback.outcome() }
        #expect(transport.sentPaths == ["/blocker", "/high1", "/high2", "/default", "/low", "/low2"])
    }

    @Test func atMostMaxConcurrentRequestsRun() async {
        agent.maxConcurrentRequests = 3
        let callbacks = (0..<5).map { start(Request("/r\($0)")).1 }
        #expect(transport.sent.count == 3)
        transport.sent[0].respond()
        #expect(await transport.sent(count: 4)?.count == 4)
        agent.maxConcurrentRequests = 5
        #expect(await transport.sent(count: 5)?.count == 5)
        for sent in transport.sent.dropFirst() { sent.respond() }
        for callback in callbacks { #expect(await callback.outcome().succeeded) }
    }

    @Test func cancellingAQueuedRequestCallsBackOnceAndNeverSendsIt() async {
        agent.maxConcurrentRequests = 1
        let (_, first) = start(Request("/first"))
        let (queued, callback) = start(Request("/queued"))
        queued.cancel()
        queued.cancel()
        let outcome = await callback.outcome()
        #expect(!outcome.succeeded)
        #expect(outcome.error == .cancelled)
        #expect(queued.isCancelled && !queued.isExecuting)
        transport.sent[0].respond()
        _ = await first.outcome()
        #expect(transport.sentPaths == ["/first"])
        #expect(callback.count == 1)
    }

    @Test func cancellingARunningRequestCancelsTheTransportAndIgnoresItsLateReply() async {
        let (task, callback) = start(Request("/running"))
        #expect(task.isExecuting)
        task.cancel()
        #expect(transport.sent[0].cancelled)
        transport.sent[0].respond()
        #expect(await callback.outcome().error == .cancelled)
        #expect(callback.count == 1)
    }

    @Test func cancelAllRequestsCancelsRunningAndQueued() async {
        agent.maxConcurrentRequests = 2
        let callbacks = (0..<5).map { start(Request("/r\($0)")).1 }
        agent.cancelAllRequests()
        for callback in callbacks { #expect(await callback.outcome().error == .cancelled) }
        #expect(transport.sent.count == 2)
        #expect(transport.sent.allSatisfy { $0.cancelled })
    }

    @Test func aFinishedTaskIgnoresCancel() async {
        let (task, callback) = start(Request("/done"))
        transport.sent[0].respond()
        #expect(await callback.outcome().succeeded)
        task.cancel()
        #expect(!task.isCancelled)
        #expect(task.error == nil)
    }

    @Test func callbacksRunOnTheConfiguredQueue() async {
        let key = DispatchSpecificKey<String>()
        callbackQueue.setSpecific(key: key, value: "callbacks")
        let onQueue = await withCheckedContinuation { continuation in
            agent.start(
                Request("/q"), success: { _ in continuation.resume(returning: DispatchQueue.getSpecific(key: key)) })
            transport.sent[0].respond()
        }
        #expect(onQueue == "callbacks")
    }

    @Test func anInvalidURLFailsThroughTheFailureCallback() async {
        let agent = NetworkAgent.testing(transport, baseUrl: "")
        let callback = Callback()
        agent.start(
            Request("relative"), success: { callback.record($0, succeeded: true) },
            failure: { callback.record($0, succeeded: false) })
        #expect(await callback.outcome().error == .invalidURL("relative"))
        #expect(transport.sent.isEmpty)
    }

    @Test func accessoriesWrapTheCallbackInOrder() async {
        struct WithAccessory: BaseRequest {
            let log: EventLog
            var url: String { "/acc" }
            var requestAccessories: [any RequestAccessory] { [LoggingAccessory(log: log, name: "request")] }
        }
        let log = EventLog()
        let callback = Callback()
        let task = agent.start(
            WithAccessory(log: log),
            success: { task in
                log.append("success")
                callback.record(task, succeeded: true)
            })
        task.addAccessory(LoggingAccessory(log: log, name: "task"))
        transport.sent[0].respond()
        _ = await callback.outcome()
        await log.waitFor(count: 6)
        #expect(
            log.events == [
                "request willStart", "request willStop", "task willStop", "success", "request didStop", "task didStop",
            ])
    }

    @Test func theConfigsAccessoriesComeFirstAndStartInTheCallersTask() async throws {
        struct WithAccessory: BaseRequest {
            let log: EventLog
            var url: String { "/acc" }
            var requestAccessories: [any RequestAccessory] { [LoggingAccessory(log: log, name: "request")] }
        }
        struct TaskLocalReader: RequestAccessory {
            let log: EventLog
            func requestWillStart(_ task: RequestTask) { log.append("config sees \(AgentTests.caller ?? "nobody")") }
        }
        let log = EventLog()
        agent.config.addRequestAccessory(TaskLocalReader(log: log))
        agent.config.addRequestAccessory(LoggingAccessory(log: log, name: "config"))
        let responding = Task { try #require(await transport.sent(count: 1))[0].respond() }
        _ = try await Self.$caller.withValue("the screen") { try await agent.response(WithAccessory(log: log)) }
        try await responding.value
        await log.waitFor(count: 7)
        #expect(
            Array(log.events.prefix(3)) == ["config sees the screen", "config willStart", "request willStart"])
        #expect(log.events.filter { $0.hasSuffix("willStop") } == ["config willStop", "request willStop"])
    }

    @TaskLocal static var caller: String?

    @Test func responseDataIsReadableOnTheTask() async {
        let (task, callback) = start(Request("/data"))
        transport.sent[0].respond(
            status: 201, headers: ["Content-Type": "application/json; charset=utf-8", "X-Id": "9"], body: #"{"id":9}"#)
        #expect(await callback.outcome().succeeded)
        #expect(task.responseStatusCode == 201)
        #expect(task.responseHeaders["X-Id"] == "9")
        #expect(task.responseString == #"{"id":9}"#)
        #expect((task.responseJSONObject as? [String: Any])?["id"] as? Int == 9)
        #expect(task.responseData == Data(#"{"id":9}"#.utf8))
        #expect(!task.isDataFromCache)
    }

    @Test func swiftTaskCancellationBeforeSendingThrowsCancelled() async {
        let agent = self.agent
        let call = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await agent.response(Request("/never"))
        }
        await #expect(throws: ErrandError.cancelled) { try await call.value }
    }

    @Test func swiftTaskCancellationCancelsTheTransport() async throws {
        let agent = self.agent
        let call = Task { try await agent.response(Request("/slow")) }
        while transport.sent.isEmpty { await Task.yield() }
        call.cancel()
        await #expect(throws: ErrandError.cancelled) { try await call.value }
        #expect(transport.sent[0].cancelled)
    }
}

/// Records the one callback a task makes, and lets a test await it.
final class Callback: @unchecked Sendable {  // Sendable because `lock` guards every field.
    struct Outcome {
        let succeeded: Bool
        let error: ErrandError?
    }

    private let lock = NSLock()
    private var outcomes: [Outcome] = []
    private var waiters: [CheckedContinuation<Outcome, Never>] = []

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return outcomes.count
    }

    func record(_ task: RequestTask, succeeded: Bool) {
        lock.lock()
        let outcome = Outcome(succeeded: succeeded, error: task.error)
        outcomes.append(outcome)
        let waiting = waiters
        waiters = []
        lock.unlock()
        waiting.forEach { $0.resume(returning: outcome) }
    }

    func outcome() async -> Outcome {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let first = outcomes.first {
                lock.unlock()
                continuation.resume(returning: first)
            } else {
                waiters.append(continuation)
                lock.unlock()
            }
        }
    }
}

/// An ordered list of event names, appended from any thread.
final class EventLog: @unchecked Sendable {  // Sendable because `lock` guards `storage`.
    private let lock = NSLock()
    private var storage: [String] = []

    var events: [String] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    func append(_ event: String) {
        lock.lock()
        storage.append(event)
        lock.unlock()
    }

    func waitFor(count: Int) async {
        while events.count < count { await Task.yield() }
    }
}

struct LoggingAccessory: RequestAccessory {
    let log: EventLog
    let name: String
    func requestWillStart(_ task: RequestTask) { log.append("\(name) willStart") }
    func requestWillStop(_ task: RequestTask) { log.append("\(name) willStop") }
    func requestDidStop(_ task: RequestTask) { log.append("\(name) didStop") }
}
