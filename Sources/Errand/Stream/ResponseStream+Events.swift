import Foundation

extension ResponseStream {
    /// The body as Server-Sent Events (`text/event-stream`), parsed by the WHATWG rules: `data`
    /// over several lines, `event`, `id`, `retry`, comments, a leading byte order mark, and CR,
    /// LF or CRLF line ends, split across chunks anywhere.
    ///
    /// An event the body cuts off before its blank line is dropped, as the rules say. A line or
    /// an event's data longer than the request's `maximumResponseSize` throws
    /// ``ErrandError/responseTooLarge(_:)`` and cancels the transfer. To reconnect after a drop
    /// with `Last-Event-ID`, use ``EventSource``.
    public var events: Events {
        Events(stream: self)
    }

    /// The Server-Sent Events of a ``ResponseStream``; see ``ResponseStream/events``.
    public struct Events: AsyncSequence, Sendable {
        /// One event.
        public typealias Element = ServerSentEvent
        /// What iteration throws.
        public typealias Failure = ErrandError

        private let stream: ResponseStream

        init(stream: ResponseStream) {
            self.stream = stream
        }

        /// Reads the stream's body event by event; the stream is consumed once.
        public func makeAsyncIterator() -> Iterator {
            makeAsyncIterator(lastEventID: "")
        }

        /// Reads the stream's events with the last event ID carried over from an earlier connection.
        func makeAsyncIterator(lastEventID: String) -> Iterator {
            Iterator(
                events: DecodingIterator(
                    stream: stream,
                    decoder: ServerSentEventParser(maximumEventSize: stream.maximumLineSize, lastEventID: lastEventID)))
        }

        /// Reads a ``ResponseStream/Events`` sequence.
        public struct Iterator: AsyncIteratorProtocol {
            /// One event.
            public typealias Element = ServerSentEvent
            /// What iteration throws.
            public typealias Failure = ErrandError

            private var events: DecodingIterator<ServerSentEventParser>
            /// The last event handed out, with the stream's state as of it.
            private var delivered: ServerSentEventParser.Dispatched?

            init(events: DecodingIterator<ServerSentEventParser>) {
                self.events = events
            }

            /// The last event ID as of the last event handed out — never of an event parsed from
            /// the same chunk but not yet handed out, which a reader that stops now would lose.
            /// Once every parsed event was handed out, it includes blocks that only set an `id`.
            /// Carried over from event to event, `""` at first.
            var lastEventID: String {
                events.isCaughtUp ? events.decoder.lastEventID : delivered?.lastEventID ?? events.decoder.lastEventID
            }

            /// The reconnection time the stream asked for with `retry`, in milliseconds, as of
            /// the last event handed out, as ``lastEventID`` is.
            var reconnectionTime: Int? {
                events.isCaughtUp ? events.decoder.reconnectionTime : delivered?.reconnectionTime
            }

            /// The next event, or `nil` at the end of the body.
            public mutating func next() async throws(ErrandError) -> ServerSentEvent? {
                delivered = try await events.next()
                return delivered?.event
            }

            /// The next event, or `nil` at the end of the body.
            @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(ErrandError)
                -> ServerSentEvent?
            {
                delivered = try await events.next(isolation: actor)
                return delivered?.event
            }
        }
    }
}
