import Foundation

/// Events from a long-poll API, as an `AsyncSequence`: Errand fetches the parameters, sends
/// long-timeout GETs back to back through an agent (so interceptors and authentication apply),
/// advances the cursor, fetches new parameters when the server says they expired, and backs off
/// when the network fails.
///
/// ```swift
/// let updates = LongPoll(VKMessages())          // a LongPollSource
/// for try await update in updates {
///     show(update)
/// }
/// ```
///
/// The sequence ends — returns `nil` — when the task iterating it is cancelled, cancelling the
/// poll in flight. It throws the ``ErrandError`` of a failure other than the network's: one that
/// ``LongPollSource/read(_:for:)`` or ``LongPollSource/fetchParameters(using:)`` throws, or a
/// poll's status other than 5xx and 429. Each iterator runs its own loop from fresh parameters.
public struct LongPoll<Source: LongPollSource>: AsyncSequence, Sendable {
    /// The events the source reads from replies, in the order the server sent them.
    public typealias Element = Source.Event

    /// The API polled.
    public let source: Source
    /// The agent the polls and parameter fetches run through.
    public let agent: NetworkAgent
    /// How many seconds the server is asked to hold each poll.
    public let wait: Int
    /// How long to wait after the network failed.
    public let backoff: ReconnectBackoff

    /// A loop over `source` through `agent` (default ``NetworkAgent/shared``), asking the server to
    /// hold each poll `wait` seconds (default `25`, VK's recommendation; Telegram allows up to 50)
    /// and backing off per `backoff` (default ``ReconnectBackoff/init(initialDelay:maximumDelay:multiplier:sleep:)``'s).
    /// Each poll may idle `wait` + 10 seconds before it times out.
    public init(_ source: Source, agent: NetworkAgent = .shared, wait: Int = 25, backoff: ReconnectBackoff = .init()) {
        self.source = source
        self.agent = agent
        self.wait = Swift.max(0, wait)
        self.backoff = backoff
    }

    /// An iterator that starts its own loop.
    public func makeAsyncIterator() -> Iterator {
        Iterator(poll: self)
    }

    /// Runs one loop; not meant to be shared between tasks.
    public struct Iterator: AsyncIteratorProtocol {
        private let poll: LongPoll
        private var parameters: LongPollParameters?
        /// The cursor to poll from after the next fetch, when an expiry kept it.
        private var keptCursor: String?
        private var pending: [Source.Event] = []
        private var pendingIndex = 0
        private var failures = 0
        private var isFinished = false

        init(poll: LongPoll) {
            self.poll = poll
        }

        /// The next event; `nil` once the iterating task is cancelled.
        public mutating func next() async throws(ErrandError) -> Source.Event? {
            while !isFinished {
                if pendingIndex < pending.count {
                    defer { pendingIndex += 1 }
                    return pending[pendingIndex]
                }
                guard !Task.isCancelled else { break }
                do throws(ErrandError) {
                    try await pollOnce()
                } catch {
                    guard !Task.isCancelled, error != .cancelled else { break }
                    guard Self.isWorthRetrying(error) else {
                        isFinished = true
                        throw error
                    }
                    guard await backOff() else { break }
                }
            }
            isFinished = true
            return nil
        }

        /// Fetches parameters if needed, then sends one poll and takes in its reply.
        private mutating func pollOnce() async throws(ErrandError) {
            let fetched = parameters == nil
            var current: LongPollParameters
            if let parameters {
                current = parameters
            } else {
                current = try await poll.source.fetchParameters(using: poll.agent)
                if let keptCursor { current.cursor = keptCursor }
                keptCursor = nil
                parameters = current
            }
            let request = LongPollRequest(
                url: current.server, arguments: poll.source.pollArguments(for: current, wait: poll.wait),
                timeoutInterval: TimeInterval(poll.wait + 10))
            let reply = try await poll.agent.response(request, ignoreCache: true)
            switch try poll.source.read(reply, for: current) {
            case .events(let events, let nextCursor):
                parameters?.cursor = nextCursor
                pending = events
                pendingIndex = 0
                failures = 0
            case .parametersExpired(let keepingCursor):
                keptCursor = keepingCursor ? current.cursor : nil
                parameters = nil
                // Parameters that expire as soon as they are fetched would make a busy loop.
                if fetched { _ = await backOff() }
            }
        }

        /// Waits out the next back-off; `false` when the task was cancelled meanwhile.
        private mutating func backOff() async -> Bool {
            failures += 1
            do {
                try await poll.backoff.sleep(poll.backoff.delay(afterFailures: failures))
            } catch {
                return false
            }
            return !Task.isCancelled
        }

        /// Whether `error` means the network or the server failed for a while.
        private static func isWorthRetrying(_ error: ErrandError) -> Bool {
            switch error {
            case .transport, .timedOut: true
            case .statusCode(let code): code >= 500 || code == 429
            default: false
            }
        }
    }
}

/// One poll: a GET the server may hold for a while, never shared with another caller.
private struct LongPollRequest: BaseRequest {
    let url: String
    let arguments: [String: any Sendable]?
    let timeoutInterval: TimeInterval
    var responseSerializerType: ResponseSerializerType { .data }
    var coalescesDuplicates: Bool { false }
}
