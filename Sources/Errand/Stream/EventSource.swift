import Foundation

/// A Server-Sent Events feed that stays connected, as a browser's `EventSource` does: it
/// reconnects after a dropped or ended connection and resumes from the last event it saw.
///
/// ```swift
/// for try await event in EventSource(NotificationsApi()) {
///     show(try event.decode(Notification.self))
/// }
/// ```
///
/// Each connection is the request sent through the agent — URL building, filters, interceptors
/// and authentication apply — with `Accept: text/event-stream`, `Cache-Control: no-cache` and,
/// once an event carried an `id`, `Last-Event-ID`. After a connection drops or the server ends
/// it, the source waits the server's `retry` time (else the back-off's first delay) and
/// reconnects; while reconnecting fails, waits grow by the back-off.
///
/// Only a request with a safe method (GET, HEAD, OPTIONS, TRACE; RFC 9110 §9.2.1) is sent again
/// by itself, as a browser's `EventSource` only ever sends GET: a POST to an LLM's chat endpoint
/// sent again would ask for the answer twice. For any other method, the end of the stream ends
/// the sequence normally and a dropped connection ends it by throwing the drop's error, unless
/// `resendsUnsafeRequests` says the server expects the request again.
///
/// The sequence ends normally — returns `nil` — when the task iterating it is cancelled, and
/// when the server answers 204, its way of saying "no more". It ends by throwing, without
/// reconnecting, on a status the request's `statusCodeValidator` rejects
/// (``ErrandError/statusCode(_:)``), on a `Content-Type` other than `text/event-stream`
/// (``ErrandError/serialization(_:)``), and on an event larger than `maximumResponseSize`.
/// The request's `timeoutInterval` (60 s by default) is how long a connection may stay silent
/// before it counts as dropped: set it above the server's heartbeat interval.
public struct EventSource: AsyncSequence, Sendable {
    /// One event.
    public typealias Element = ServerSentEvent
    /// What iteration throws.
    public typealias Failure = ErrandError

    /// The request each connection sends.
    public let request: any BaseRequest
    /// The agent the connections run through.
    public let agent: NetworkAgent
    /// How long to wait before reconnecting when the server named no `retry` time, and after
    /// failed reconnects.
    public let backoff: ReconnectBackoff
    /// Whether a request with a method that is not safe, such as POST, is sent again after its
    /// connection ended or dropped. Default `false`.
    public let resendsUnsafeRequests: Bool

    private let carried: Locked<String>

    /// A feed from `request` through `agent` (default ``NetworkAgent/shared``), waiting per
    /// `backoff` (default ``ReconnectBackoff/init(initialDelay:maximumDelay:multiplier:sleep:)``'s)
    /// where the server named no `retry` time. `lastEventID` (default `""`: none) resumes a feed
    /// read earlier, such as before the app was relaunched. `resendsUnsafeRequests` (default
    /// `false`) lets a POST or another unsafe request reconnect as a GET does.
    public init(
        _ request: some BaseRequest, agent: NetworkAgent = .shared, backoff: ReconnectBackoff = .init(),
        lastEventID: String = "", resendsUnsafeRequests: Bool = false
    ) {
        self.request = request
        self.agent = agent
        self.backoff = backoff
        self.resendsUnsafeRequests = resendsUnsafeRequests
        carried = Locked(lastEventID)
    }

    /// The last event ID: the newest `id` the server sent up to the last event handed out,
    /// carried from event to event and over reconnects; `""` while there is none. It is what the
    /// next connection sends as `Last-Event-ID`, and what to keep to resume the feed later with
    /// `init(_:agent:backoff:lastEventID:)`: an event not yet handed out is never counted.
    public var lastEventID: String { carried[\.self] }

    /// An iterator that runs its own connection.
    public func makeAsyncIterator() -> Iterator {
        Iterator(source: self)
    }

    /// Runs one connection at a time and reconnects; not meant to be shared between tasks.
    public struct Iterator: AsyncIteratorProtocol {
        /// One event.
        public typealias Element = ServerSentEvent
        /// What iteration throws.
        public typealias Failure = ErrandError

        private let source: EventSource
        private var stream: ResponseStream?
        private var events: ResponseStream.Events.Iterator?
        /// The server's `retry` time in milliseconds, kept over reconnects.
        private var reconnectionTime: Int?
        /// Connections that failed in a row since one last opened.
        private var failures = 0
        private var waitsBeforeConnecting = false
        private var isFinished = false
        /// Whether the request may be sent again: by its method as defined, then as last sent.
        private var mayReconnect: Bool

        init(source: EventSource) {
            self.source = source
            mayReconnect = source.resendsUnsafeRequests || Self.safeMethods.contains(source.request.method.rawValue)
        }

        /// The next event; `nil` once the iterating task is cancelled or the server answered 204.
        public mutating func next() async throws(ErrandError) -> ServerSentEvent? {
            while !isFinished, !Task.isCancelled {
                guard var current = events else {
                    guard await waitBeforeConnecting() else { break }
                    try await connect()
                    continue
                }
                do throws(ErrandError) {
                    let event = try await current.next()
                    events = current
                    remember(current)
                    if let event { return event }
                    // The server ended the stream: a feed reconnects.
                    disconnect()
                    guard mayReconnect else { break }
                } catch {
                    remember(current)
                    disconnect()
                    guard error != .cancelled, !Task.isCancelled else { break }
                    guard Self.isDrop(error), mayReconnect else {
                        isFinished = true
                        throw error
                    }
                    failures += 1
                }
            }
            isFinished = true
            stream?.cancel()
            return nil
        }

        /// Opens a connection; a failure that reconnecting could cure counts and returns.
        private mutating func connect() async throws(ErrandError) {
            waitsBeforeConnecting = true
            var headers = ["Accept": "text/event-stream", "Cache-Control": "no-cache"]
            let lastEventID = source.lastEventID
            if !lastEventID.isEmpty { headers["Last-Event-ID"] = lastEventID }
            let opened: ResponseStream
            do throws(ErrandError) {
                opened = try await source.agent.stream(source.request, headers: headers)
            } catch {
                guard error != .cancelled, !Task.isCancelled else {
                    isFinished = true
                    return
                }
                guard Self.isDrop(error), mayReconnect else {
                    isFinished = true
                    throw error
                }
                failures += 1
                return
            }
            if opened.response.statusCode == 204 {
                isFinished = true
                return
            }
            guard Self.isEventStream(opened.response.value(forHeader: "Content-Type")) else {
                opened.cancel()
                isFinished = true
                let type = opened.response.value(forHeader: "Content-Type") ?? "none"
                throw .serialization(
                    "\(opened.task.transportRequest?.url.absoluteString ?? "the event source") answered "
                        + "Content-Type \(type), not text/event-stream")
            }
            failures = 0
            stream = opened
            let method = opened.task.transportRequest?.method ?? source.request.method.rawValue
            mayReconnect = source.resendsUnsafeRequests || Self.safeMethods.contains(method.uppercased())
            events = opened.events.makeAsyncIterator(lastEventID: lastEventID)
        }

        /// Waits before a reconnect: the server's `retry` time, else the back-off's; longer while
        /// reconnects keep failing. `false` when the task was cancelled meanwhile.
        private mutating func waitBeforeConnecting() async -> Bool {
            guard waitsBeforeConnecting else { return true }
            let backoff = source.backoff.delay(afterFailures: Swift.max(failures, 1))
            let delay =
                switch (reconnectionTime, failures) {
                case (let milliseconds?, 0...1): TimeInterval(milliseconds) / 1000
                case (let milliseconds?, _): Swift.max(TimeInterval(milliseconds) / 1000, backoff)
                case (nil, _): backoff
                }
            do {
                try await source.backoff.sleep(delay)
            } catch {
                return false
            }
            return !Task.isCancelled
        }

        /// Keeps what the connection's events said for the next one: the last event ID, the `retry` time.
        private mutating func remember(_ events: ResponseStream.Events.Iterator) {
            source.carried[\.self] = events.lastEventID
            if let time = events.reconnectionTime { reconnectionTime = time }
        }

        private mutating func disconnect() {
            stream?.cancel()
            stream = nil
            events = nil
        }

        /// The methods RFC 9110 §9.2.1 defines as safe: sending one again asks for nothing new.
        private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

        /// Whether `error` means the connection was lost or could not be made, which a reconnect may cure.
        private static func isDrop(_ error: ErrandError) -> Bool {
            switch error {
            case .transport, .timedOut: true
            default: false
            }
        }

        /// Whether a `Content-Type` names `text/event-stream`, whatever its parameters and case.
        private static func isEventStream(_ contentType: String?) -> Bool {
            guard let contentType else { return false }
            let mediaType = contentType.split(separator: ";", maxSplits: 1).first?.trimmed ?? ""
            return mediaType.equalsIgnoringASCIICase("text/event-stream")
        }
    }
}
