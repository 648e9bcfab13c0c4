import Foundation

/// Records the requests it watches as an HTTP Archive (HAR 1.2): the file browsers' network
/// panels, Charles and Proxyman open. Add it with ``NetworkConfig/addEventMonitor(_:)``, run the
/// session, then ``write(to:)`` the file.
///
/// ```swift
/// let recorder = HARRecorder(redaction: .default.adding(jsonFields: ["password"]))
/// config.addEventMonitor(recorder)
/// // … requests …
/// try recorder.write(to: URL(fileURLWithPath: "session.har"))
/// ```
///
/// Each task that went to the network becomes one entry, once it finished: the request as its
/// last attempt sent it (after interceptors), headers and body, and the response it got with its
/// body, or status `0` when none arrived. A retried task is recorded once, by its last attempt,
/// and its comment says which attempt that was. A response served from Errand's cache is not
/// recorded: nothing went over the network, and the exchange that filled the cache is recorded
/// when it happened. Timings come from ``RequestTask/metrics`` when the transport reports them
/// (``CurlTransport``); otherwise only the wait and receive phases, as the recorder saw them.
///
/// ``write(to:)``, ``harData()`` and ``entryCount`` hold every request that finished before they
/// were called, so the file can be written right after the last `await`.
///
/// What ``Redaction`` names is masked before anything is kept. Bodies are recorded as text when
/// they are text or JSON, else base64, up to `maximumBodySize` bytes each; a ``ResponseStream``'s
/// body as it was read, its start when the stream was left early. A download's body is in its
/// file and not recorded, nor is a request body streamed from a ``BodyStream``. The recorder keeps
/// the newest `maximumEntries`, dropping the oldest past that. It may be shared by several
/// configurations and read from any thread.
public final class HARRecorder: EventMonitor, DrainableMonitor {
    private struct State {
        /// Sent and not yet finished, by task.
        var inFlight: [ObjectIdentifier: HAREntryBuilder.Exchange] = [:]
        var entries: [HTTPArchive.Entry] = []
        /// Where the oldest entry is in `entries` once it is full: a ring, so dropping costs nothing.
        var oldest = 0
    }

    private let builder: HAREntryBuilder
    private let maximumEntries: Int
    private let state = Locked(State())
    /// The channels that deliver to it, one per configuration it was added to.
    private let channels = Locked<[WeakChannel]>([])

    /// Tasks in flight remembered at most: a monitor that missed `didFinish` events (too far
    /// behind) must not keep their requests forever.
    private static let inFlightLimit = 10_000

    /// Creates a recorder.
    ///
    /// - Parameters:
    ///   - redaction: What to mask. Default ``Redaction/default``: the credentials in
    ///     `Authorization`, `Proxy-Authorization`, `Cookie` and `Set-Cookie`.
    ///   - maximumBodySize: Bytes of each request and response body to record; a longer body is
    ///     cut there, its comment saying so (``ReplayTransport`` then fails a request that entry
    ///     would answer, rather than serve part of a response body). Default 1 MiB.
    ///   - maximumEntries: Entries to keep; past that the oldest is dropped. Default 1,000.
    public init(redaction: Redaction = .default, maximumBodySize: Int = 1 << 20, maximumEntries: Int = 1000) {
        builder = HAREntryBuilder(redaction: redaction, maximumBodySize: max(maximumBodySize, 0))
        self.maximumEntries = max(maximumEntries, 1)
    }

    /// How many entries the recording holds now: every request that finished before this is
    /// asked is counted (see ``harData()``).
    public var entryCount: Int {
        deliverPostedEvents()
        return state.withLock { $0.entries.count }
    }

    /// The recording as a HAR 1.2 file, pretty-printed with sorted keys, entries oldest first.
    ///
    /// It holds every request that finished before this is called — once `await
    /// agent.response(…)` returned, or its callback ran — though the recorder's queue may not
    /// have delivered their last events yet: the events already posted to it are taken in first,
    /// on the calling thread. That is the recorder's own work on them, no I/O and no waiting on
    /// the network, so it is safe from `async` code and from another monitor's events.
    public func harData() -> Data {
        archive().encoded()
    }

    /// Writes ``harData()`` to `url`, replacing the file atomically: a reader never sees half of
    /// it. Like ``harData()``, the file holds every request that finished before this call.
    ///
    /// - Throws: ``ErrandError/fileSystem(_:)`` naming the path and the reason when it cannot be written.
    public func write(to url: URL) throws(ErrandError) {
        try archive().write(to: url)
    }

    private func archive() -> HTTPArchive {
        deliverPostedEvents()
        let entries = state.withLock { $0.entries[$0.oldest...] + $0.entries[..<$0.oldest] }
        return HTTPArchive(entries: Array(entries))
    }

    /// Takes in the events posted to the recorder and not yet delivered, from every channel.
    private func deliverPostedEvents() {
        let live = channels.withLock { channels in
            channels.removeAll { $0.channel == nil }
            return channels.compactMap(\.channel)
        }
        for channel in live { channel.deliverPosted() }
    }

    // MARK: DrainableMonitor

    func attach(_ channel: EventMonitorChannel) {
        channels.withLock { channels in
            channels.removeAll { $0.channel == nil }
            channels.append(WeakChannel(channel: channel))
        }
    }

    /// The body is read here, as the request goes out: a body file is deleted when the task
    /// finishes, which may be before the recorder's queue delivers the event.
    func willSendEvent(_ task: RequestTask, _ request: TransportRequest) -> EventMonitorChannel.Event {
        let exchange = HAREntryBuilder.Exchange(
            request: request, body: builder.sentBody(of: request), startedAt: Date(), sentAt: .now, finishedAt: .now,
            attemptCount: 1)
        return { [self] _ in remember(exchange, of: task) }
    }

    func didReceiveEvent(_ task: RequestTask, _ response: Response) -> EventMonitorChannel.Event {
        let now = ContinuousClock.now
        return { [self] _ in noteHead(response, of: task, at: now) }
    }

    /// A download's file is measured now too: no I/O is done where the event is delivered.
    func didFinishEvent(_ task: RequestTask, _ result: Result<Response, ErrandError>) -> EventMonitorChannel.Event {
        let now = ContinuousClock.now
        let download = ((try? result.get()) ?? task.response)?.fileURL.map(HAREntryBuilder.fileSize)
        return { [self] _ in record(task, result, finishedAt: now, downloadSize: download) }
    }

    func webSocketMessageEvent(_ task: RequestTask, _ message: WebSocketMessage, isSent: Bool)
        -> EventMonitorChannel.Event
    {
        let recorded = HAREntryBuilder.SocketMessage(isSent: isSent, time: Date(), message: message)
        return { [self] _ in
            state.withLock { $0.inFlight[ObjectIdentifier(task)]?.add(recorded, upTo: builder.maximumBodySize) }
        }
    }

    /// Keeps the chunk's bytes that fit in `maximumBodySize`, and counts the rest: the entry
    /// gets the body's start and its whole size.
    func streamedBodyEvent(_ task: RequestTask, _ chunk: Data, at offset: Int) -> EventMonitorChannel.Event {
        let kept = offset < builder.maximumBodySize ? chunk.prefix(builder.maximumBodySize - offset) : Data()
        let size = offset + chunk.count
        return { [self] _ in
            state.withLock { $0.inFlight[ObjectIdentifier(task)]?.addStreamed(kept, bodySize: size) }
        }
    }

    // MARK: EventMonitor

    /// Remembers the attempt going out, its body read now. The requests of a configuration the
    /// recorder was added to do not come here: their bodies are read as they go out, before the
    /// event is queued, for a body file may be gone by the time it is delivered.
    public func request(_ task: RequestTask, willSend request: TransportRequest) {
        remember(
            HAREntryBuilder.Exchange(
                request: request, body: builder.sentBody(of: request), startedAt: Date(), sentAt: .now,
                finishedAt: .now, attemptCount: 1),
            of: task)
    }

    private func remember(_ exchange: HAREntryBuilder.Exchange, of task: RequestTask) {
        state.withLock { state in
            if state.inFlight.count >= Self.inFlightLimit, state.inFlight[ObjectIdentifier(task)] == nil,
                let stalest = state.inFlight.min(by: { $0.value.sentAt < $1.value.sentAt })
            {
                state.inFlight[stalest.key] = nil
            }
            state.inFlight[ObjectIdentifier(task)] = exchange
        }
    }

    /// Notes when the head arrived, for the wait phase when the transport reports no metrics, and
    /// the head, which a stream left early records.
    public func request(_ task: RequestTask, didReceive response: Response) {
        noteHead(response, of: task, at: .now)
    }

    private func noteHead(_ head: Response, of task: RequestTask, at time: ContinuousClock.Instant) {
        state.withLock { state in
            state.inFlight[ObjectIdentifier(task)]?.headAt = time
            state.inFlight[ObjectIdentifier(task)]?.head = head
        }
    }

    /// Forgets the task: its response came from the cache, not the network (see the type's
    /// documentation).
    public func request(_ task: RequestTask, didServeFromCache response: Response) {
        state.withLock { $0.inFlight[ObjectIdentifier(task)] = nil }
    }

    /// Records the task's last exchange, if it sent one.
    public func request(_ task: RequestTask, didFinish result: Result<Response, ErrandError>) {
        record(task, result, finishedAt: .now)
    }

    private func record(
        _ task: RequestTask, _ result: Result<Response, ErrandError>, finishedAt: ContinuousClock.Instant,
        downloadSize: Int? = nil
    ) {
        guard var exchange = state.withLock({ $0.inFlight.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        switch result {
        case .success(let response):
            guard !response.isDataFromCache else { return }
            exchange.response = response
        case .failure(let error):
            // A rejected status still has its response, body and all: a 404's page is worth seeing.
            // A stream left early — an SSE reader stopping at `[DONE]` — has its head, and the
            // body that arrived.
            exchange.response =
                task.response.flatMap { $0.isDataFromCache ? nil : $0 } ?? (task.stream != nil ? exchange.head : nil)
            exchange.error = error
        }
        exchange.finishedAt = finishedAt
        exchange.metrics = task.metrics
        exchange.attemptCount = task.attemptCount
        exchange.responseBodySize = downloadSize
        exchange.takeStreamedBody()
        let entry = builder.entry(exchange)
        state.withLock { state in
            guard state.entries.count >= maximumEntries else { return state.entries.append(entry) }
            state.entries[state.oldest] = entry
            state.oldest = (state.oldest + 1) % state.entries.count
        }
    }
}
