import Foundation

extension ResponseStream {
    /// The body as lines of text: for NDJSON, logs, any line-based stream.
    ///
    /// A line ends at LF; a CR just before it is dropped. Lines are decoded as UTF-8 — a
    /// character split across chunks stays whole, invalid bytes become U+FFFD — and the last
    /// line is yielded even without a line end. A line longer than the request's
    /// `maximumResponseSize` throws ``ErrandError/responseTooLarge(_:)`` and cancels the
    /// transfer; the stream as a whole has no limit.
    public var lines: Lines {
        Lines(stream: self)
    }

    /// The lines of a ``ResponseStream``; see ``ResponseStream/lines``.
    public struct Lines: AsyncSequence, Sendable {
        /// One line, without its line end.
        public typealias Element = String
        /// What iteration throws.
        public typealias Failure = ErrandError

        private let stream: ResponseStream

        init(stream: ResponseStream) {
            self.stream = stream
        }

        /// Reads the stream's body line by line; the stream is consumed once.
        public func makeAsyncIterator() -> Iterator {
            Iterator(
                lines: DecodingIterator(
                    stream: stream,
                    decoder: LineSplitter(maximumLineLength: stream.maximumLineSize, endsLineOnCarriageReturn: false)))
        }

        /// Reads a ``ResponseStream/Lines`` sequence.
        public struct Iterator: AsyncIteratorProtocol {
            /// One line, without its line end.
            public typealias Element = String
            /// What iteration throws.
            public typealias Failure = ErrandError

            private var lines: DecodingIterator<LineSplitter>

            init(lines: DecodingIterator<LineSplitter>) {
                self.lines = lines
            }

            /// The next line, or `nil` after the last.
            public mutating func next() async throws(ErrandError) -> String? {
                try await lines.next()
            }

            /// The next line, or `nil` after the last.
            @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, *)
            public mutating func next(isolation actor: isolated (any Actor)?) async throws(ErrandError) -> String? {
                try await lines.next(isolation: actor)
            }
        }
    }
}
