/// The monitors a task reports to, read from the configuration when it starts; each method posts
/// one event to every monitor. With none, each is one check of an empty array.
struct EventMonitors: Sendable {
    private let channels: [EventMonitorChannel]

    init(_ channels: [EventMonitorChannel]) {
        self.channels = channels
    }

    var isEmpty: Bool { channels.isEmpty }

    func requestDidStart(_ task: RequestTask) {
        post { $0.requestDidStart(task) }
    }

    // A drainable monitor (HARRecorder) makes its own event for these three, on this thread.

    func request(_ task: RequestTask, willSend request: TransportRequest) {
        let event: EventMonitorChannel.Event = { $0.request(task, willSend: request) }
        for channel in channels { channel.post(channel.drainable?.willSendEvent(task, request) ?? event) }
    }

    func request(_ task: RequestTask, didReceive response: Response) {
        let event: EventMonitorChannel.Event = { $0.request(task, didReceive: response) }
        for channel in channels { channel.post(channel.drainable?.didReceiveEvent(task, response) ?? event) }
    }

    func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool) {
        post { $0.request(task, didFailAttempt: error, willRetry: willRetry) }
    }

    func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
        let event: EventMonitorChannel.Event = { $0.request(task, didFinish: result) }
        for channel in channels { channel.post(channel.drainable?.didFinishEvent(task, result) ?? event) }
    }

    func request(_ task: RequestTask, didServeFromCache response: Response) {
        post { $0.request(task, didServeFromCache: response) }
    }

    private func post(_ event: @escaping @Sendable (any EventMonitor) -> Void) {
        for channel in channels { channel.post(event) }
    }
}
