import Foundation

/// One whole WebSocket message, as sent or received: fragments are joined, and control frames
/// (ping, pong, close) never appear as messages.
public enum WebSocketMessage: Sendable, Equatable {
    /// A text message, valid UTF-8 on the wire.
    case text(String)
    /// A binary message.
    case binary(Data)

    /// The message decoded as JSON into `T`: a text message's UTF-8, or a binary message's bytes.
    /// - Throws: ``ErrandError/decoding(_:)`` naming the type and the coding path that failed.
    public func decode<T: Decodable>(_ type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder())
        throws(ErrandError) -> T
    {
        let data =
            switch self {
            case .text(let text): Data(text.utf8)
            case .binary(let data): data
            }
        do {
            return try decoder.decode(T.self, from: data)
        } catch {
            throw .decoding("\(T.self) from a WebSocket message: \(error)")
        }
    }
}
