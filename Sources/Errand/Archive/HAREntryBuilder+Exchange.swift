import Foundation

extension HAREntryBuilder {
    /// What the recorder knows of an exchange when it finishes.
    struct Exchange: Sendable {
        var request: TransportRequest
        var body: SentBody
        var startedAt: Date
        var sentAt: ContinuousClock.Instant
        var headAt: ContinuousClock.Instant?
        /// The response's head as it arrived: a stream's, whose task ends without a response when
        /// its reader leaves early.
        var head: Response?
        var finishedAt: ContinuousClock.Instant
        var response: Response?
        var error: ErrandError?
        var metrics: TransportMetrics?
        var attemptCount: Int
        /// The response body's whole size when `response` holds only its start (a recording cut
        /// it), or a download's file size, taken when it finished; `nil` for the size of
        /// `response.data`, or of the download's file now.
        var responseBodySize: Int?
        /// A WebSocket's messages, in order, as many as fit in the body size recorded.
        var socketMessages: [SocketMessage] = []
        /// Messages past that size, counted and not kept.
        var droppedSocketMessages = 0
        /// The bytes of `socketMessages`.
        var socketMessageBytes = 0

        /// The start of a streamed response body, which the response at its end does not hold.
        var streamedBody = Data()
        /// The streamed body's size so far; `nil` for a response that was not streamed.
        var streamedBodySize: Int?

        /// Adds the `kept` start of a streamed body's chunk, the body `bodySize` bytes long with it.
        mutating func addStreamed(_ kept: Data, bodySize: Int) {
            streamedBody += kept
            streamedBodySize = bodySize
        }

        /// Puts a streamed body into the response, whose own `data` is empty.
        mutating func takeStreamedBody() {
            guard let size = streamedBodySize, let response, response.data.isEmpty else { return }
            self.response = Response(
                statusCode: response.statusCode, headers: response.headers, data: streamedBody,
                trailers: response.trailers)
            responseBodySize = size
        }

        /// Adds `message` when it fits in `limit` bytes of messages, else counts it: a recording
        /// keeps the start of a socket's conversation.
        mutating func add(_ message: SocketMessage, upTo limit: Int) {
            guard droppedSocketMessages == 0, socketMessageBytes + message.size <= limit else {
                droppedSocketMessages += 1
                return
            }
            socketMessages.append(message)
            socketMessageBytes += message.size
        }
    }
}
