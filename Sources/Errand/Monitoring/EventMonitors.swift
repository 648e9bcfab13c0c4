import Foundation

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
    /// Whether any monitor records what it hears (a HAR recording): only those hear of a
    /// WebSocket's messages and of a streamed body's chunks. Worked out once, as it is asked per chunk.
    let hasRecorders: Bool

    init(_ channels: [EventMonitorChannel]) {
        self.channels = channels
        hasFinished = channels.isEmpty ? nil : Locked(false)
        hasRecorders = channels.contains { $0.drainable != nil }
    }

    var isEmpty: Bool { channels.isEmpty }

    func requestDidStart(_ task: RequestTask) {
        post { $0.requestDidStart(task) }
    }

    // A drainable monitor (HARRecorder) makes its own event for these three, on this thread.

    func request(_ task: RequestTask, willSend request: TransportRequest) {
        post({ $0.willSendEvent(task, request) }, else: { $0.request(task, willSend: request) })
    }

    func request(_ task: RequestTask, didReceive response: Response) {
        post({ $0.didReceiveEvent(task, response) }, else: { $0.request(task, didReceive: response) })
    }

    func request(_ task: RequestTask, didReceiveInterim response: Response) {
        post { $0.request(task, didReceiveInterim: response) }
    }

    func request(_ task: RequestTask, didFailAttempt error: ErrandError, willRetry: Bool) {
        post { $0.request(task, didFailAttempt: error, willRetry: willRetry) }
    }

    /// Posts `didFinish`, then runs `deliver`, which tells the task's caller: at once, or once
    /// every monitor that ``EventMonitor/finishesBeforeCaller`` has heard it, on a queue of
    /// Dispatch's. No thread waits meanwhile.
    func request(
        _ task: RequestTask, didFinish result: Result<Response, ErrandError>,
        then deliver: @escaping @Sendable () -> Void
    ) {
        let awaited = channels.contains(where: \.finishesBeforeCaller) ? DispatchGroup() : nil
        post(
            finishing: true, { $0.didFinishEvent(task, result) }, else: { $0.request(task, didFinish: result) },
            awaitedIn: awaited)
        guard let awaited else { return deliver() }
        awaited.notify(queue: .global(), execute: deliver)
    }

    func request(_ task: RequestTask, didServeFromCache response: Response) {
        post { $0.request(task, didServeFromCache: response) }
    }

    /// A message the task's WebSocket sent or received: for drainable monitors (a HAR recording) only.
    func request(_ task: RequestTask, webSocketMessage message: WebSocketMessage, isSent: Bool) {
        post({ $0.webSocketMessageEvent(task, message, isSent: isSent) }, else: nil)
    }

    /// A chunk of a streamed response body, `offset` bytes into it: for drainable monitors only,
    /// as the body goes to the stream's reader and is not in the response they finish with.
    func request(_ task: RequestTask, streamedBody chunk: Data, at offset: Int) {
        post({ $0.streamedBodyEvent(task, chunk, at: offset) }, else: nil)
    }

    private func post(finishing: Bool = false, _ event: @escaping EventMonitorChannel.Event) {
        post(finishing: finishing, { _ in event }, else: event)
    }

    /// Posts to every monitor the event a drainable one makes itself, else `event` (none when
    /// `nil`), unless the task's `didFinish` was posted; `finishing` marks this as that one. The
    /// events are made first — a drainable one may read a file — and posted under the lock,
    /// which a channel's post, only queueing, holds briefly.
    /// A channel whose monitor ``EventMonitor/finishesBeforeCaller`` is entered in `awaited`,
    /// when given, until its event was delivered or dropped.
    private func post(
        finishing: Bool = false, _ drainableEvent: (any DrainableMonitor) -> EventMonitorChannel.Event,
        else event: EventMonitorChannel.Event?, awaitedIn awaited: DispatchGroup? = nil
    ) {
        guard let hasFinished else { return }
        let events = channels.compactMap { channel in
            (channel.drainable.map(drainableEvent) ?? event).map { (channel, $0) }
        }
        hasFinished.withLock { hasFinished in
            guard !hasFinished else { return }
            hasFinished = finishing
            for (channel, event) in events {
                guard let awaited, channel.finishesBeforeCaller else {
                    channel.post(event)
                    continue
                }
                awaited.enter()
                let posted = channel.post(
                    { monitor in
                        event(monitor)
                        awaited.leave()
                    }, prompt: true)
                if !posted { awaited.leave() }
            }
        }
    }
}
