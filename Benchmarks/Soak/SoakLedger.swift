import Errand
import Foundation

/// A request of the soak whose accessories must be told of its end, as every request with a
/// callback or an `await` is; event streams and sockets are not held to that.
protocol SoakExchange: BaseRequest {}

/// Watches every task of the soak's agent, as an event monitor and as an accessory, and checks
/// that each one's life is whole: `requestDidStart` first, `didFinish` exactly once and nothing
/// after it, and for an exchange the accessory's start, `requestWillStop` and `requestDidStop`
/// once each, in that order. What is still running at the end never ended.
final class SoakLedger: EventMonitor, RequestAccessory, @unchecked Sendable {  // `running` only under `lock`
    private struct Record {
        let task: RequestTask
        let startedAt: Double
        let isExchange: Bool
        var monitorStarted = false
        var finished = false
        var accessoryStarted = false
        var willStop = false
        var didStop = false
        var isOverdue = false

        var isComplete: Bool { finished && (!isExchange || didStop) }
    }

    private enum Event: String {
        case didStart = "requestDidStart", willSend = "willSend", didReceive = "didReceive",
            didFailAttempt = "didFailAttempt", didServeFromCache = "didServeFromCache", didFinish = "didFinish"
        case accessoryStart = "requestWillStart", willStop = "requestWillStop", didStop = "requestDidStop"

        var isAccessory: Bool { self == .accessoryStart || self == .willStop || self == .didStop }
    }

    private let lock = NSLock()
    private var running: [ObjectIdentifier: Record] = [:]
    private let tally: SoakTally

    init(tally: SoakTally) {
        self.tally = tally
    }

    /// Tasks started and not yet whole: at the end of the soak, those that never ended.
    func unfinished() -> [(url: String, age: Double, finished: Bool)] {
        let now = tally.elapsed
        return lock.withLock {
            running.values.map {
                ($0.task.sentRequest?.url.absoluteString ?? $0.task.request.url, now - $0.startedAt, $0.finished)
            }
        }
    }

    var runningCount: Int { lock.withLock { running.count } }

    /// Exchanges running for more than `seconds` that were not reported before: each a breach.
    /// Their own timeouts are at most 30 s between bytes, so this is a hang, or a queue that
    /// does not move.
    func checkOverdue(after seconds: Double) {
        let now = tally.elapsed
        let overdue = lock.withLock { () -> [String] in
            var found: [String] = []
            for (id, record) in running where record.isExchange && !record.isOverdue && now - record.startedAt > seconds
            {
                running[id]?.isOverdue = true
                found.append(record.task.sentRequest?.url.absoluteString ?? "\(record.task.request.url) (never sent)")
            }
            return found
        }
        for url in overdue {
            tally.breach(
                "every request ends within minutes, not held in a queue",
                "\(url) has run \(Int(seconds)) s and not ended")
        }
    }

    // MARK: EventMonitor

    func requestDidStart(_ task: RequestTask) { note(.didStart, task) }

    func request(_ task: RequestTask, willSend request: TransportRequest) {
        note(.willSend, task)
        tally.count("sent.port.\(request.url.port ?? 0)")
    }

    func request(_ task: RequestTask, didReceive response: Response) { note(.didReceive, task) }

    func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool) {
        note(.didFailAttempt, task)
        if willRetry { tally.count("retried.\(RequestMix.reason(error))") }
    }

    func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) { note(.didFinish, task) }

    func request(_ task: RequestTask, didServeFromCache response: Response) { note(.didServeFromCache, task) }

    // MARK: RequestAccessory

    func requestWillStart(_ task: RequestTask) { note(.accessoryStart, task) }
    func requestWillStop(_ task: RequestTask) { note(.willStop, task) }
    func requestDidStop(_ task: RequestTask) { note(.didStop, task) }

    // MARK: Rules

    private func note(_ event: Event, _ task: RequestTask) {
        let isExchange = task.request is any SoakExchange
        // Streams' and sockets' accessories are not checked: only their monitor events are.
        if event.isAccessory && !isExchange { return }
        let id = ObjectIdentifier(task)
        let now = tally.elapsed
        let problem = lock.withLock { () -> String? in
            var record = running[id] ?? Record(task: task, startedAt: now, isExchange: isExchange)
            let isNew = running[id] == nil
            defer {
                // Nothing is kept for an event of a task that is not running: it was a breach.
                let starts = event == .didStart || event == .accessoryStart
                if record.isComplete || (isNew && !starts) { running[id] = nil } else { running[id] = record }
            }
            switch event {
            case .didStart:
                guard !record.monitorStarted else { return "requestDidStart twice" }
                record.monitorStarted = true
            case .accessoryStart:
                guard !record.accessoryStarted else { return "requestWillStart twice" }
                record.accessoryStarted = true
            case .willStop:
                guard !isNew, !record.willStop else {
                    return isNew ? "requestWillStop after the end" : "requestWillStop twice"
                }
                record.willStop = true
            case .didStop:
                guard !isNew, record.willStop, !record.didStop else {
                    return isNew ? "requestDidStop after the end" : "requestDidStop out of order"
                }
                record.didStop = true
            case .didFinish:
                guard !isNew, record.monitorStarted, !record.finished else {
                    return isNew ? "didFinish of a task not running (a second didFinish?)" : "didFinish twice"
                }
                record.finished = true
            case .willSend, .didReceive, .didFailAttempt, .didServeFromCache:
                guard !isNew, record.monitorStarted, !record.finished else {
                    return "\(event.rawValue) after didFinish"
                }
            }
            return nil
        }
        if let problem {
            tally.breach(
                "a task's events are whole and in order, nothing after didFinish",
                "\(problem): \(task.sentRequest?.url.absoluteString ?? task.request.url)")
        }
    }
}
