import Foundation

/// One event of a Server-Sent Events stream (`text/event-stream`), as the WHATWG EventSource
/// rules dispatch it: the fields of one block of lines ended by a blank line.
public struct ServerSentEvent: Sendable, Equatable {
    /// This event's own `id` field; `nil` when its block had none. The id carried over from
    /// earlier events, which a reconnect sends as `Last-Event-ID`, is the stream's, not this.
    public let id: String?
    /// The event type from the `event` field; `"message"` when the block named none.
    public let event: String
    /// The `data` fields' values joined by line feeds, without a trailing one.
    public let data: String
    /// The reconnection time in milliseconds from this event's block, when it carried a valid
    /// `retry` field (ASCII digits only); otherwise `nil`.
    public let retry: Int?

    /// Creates an event; useful for stubbing a stream. `event` defaults to `"message"`, `id` and
    /// `retry` to `nil`.
    public init(id: String? = nil, event: String = "message", data: String, retry: Int? = nil) {
        self.id = id
        self.event = event
        self.data = data
        self.retry = retry
    }

    /// Decodes ``data`` as JSON into `type`, as most LLM and notification APIs send it.
    ///
    /// - Throws: ``ErrandError/decoding(_:)`` naming the type and the coding path that failed.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws(ErrandError) -> T {
        do {
            return try decoder.decode(type, from: Data(data.utf8))
        } catch let error as DecodingError {
            throw .decoding("\(T.self): \(error.summary)")
        } catch {
            throw .decoding("\(T.self): \(error)")
        }
    }
}
