/// The monitors a task reports to, read from the configuration when it starts; each method posts
/// one event to every monitor. With none, each is one check of an empty array.
///
/// One value per task. It keeps the contract whatever the threads: `didFinish` is posted once
/// and last. An event that comes later — a retry decision that was still running when the task
/// was cancelled, a response head the transport had already queued — is dropped, because each
/// event is posted under one lock with the note that the task finished.
struct EventMonitors: Sendable {
    private let channels: [EventMonitorChannel]
    /// Whether `didFinish` was posted; `nil` with no monitors, which then cost no lock.
    private let hasFinished: Locked<Bool>?

    init(_ channels: [EventMonitorChannel]) {
        self.channels = channels
        hasFinished = channels.isEmpty ? nil : Locked(false)
    }

    var isEmpty: Bool { channels.isEmpty }

    func requestDidStart(_ task: RequestTask) {
        post { $0.requestDidStart(task) }
    }

    func request(_ task: RequestTask, willSend request: TransportRequest) {
        post { $0.request(task, willSend: request) }
    }

    func request(_ task: RequestTask, didReceive response: Response) {
        post { $0.request(task, didReceive: response) }
    }

    func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool) {
        post { $0.request(task, didFailAttempt: error, willRetry: willRetry) }
    }

    func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
        post(finishing: true) { $0.request(task, didFinish: result) }
    }

    func request(_ task: RequestTask, didServeFromCache response: Response) {
        post { $0.request(task, didServeFromCache: response) }
    }

    /// Posts `event` to every monitor unless the task's `didFinish` was posted; `finishing`
    /// marks this event as that one. A channel's post only queues, so the lock is held briefly.
    private func post(finishing: Bool = false, _ event: @escaping @Sendable (any EventMonitor) -> Void) {
        hasFinished?.withLock { hasFinished in
            guard !hasFinished else { return }
            hasFinished = finishing
            for channel in channels { channel.post(event) }
        }
    }
}
