import Foundation

/// Joins a server's frames into messages and control events, by RFC 6455's message rules: a
/// continuation only inside a fragmented message, no new message before the last ends, text
/// valid UTF-8 (checked as fragments arrive when uncompressed), close codes and reasons valid,
/// and no message past the size limit.
package struct WebSocketMessageAssembler {
    /// What the frames amount to.
    package enum Event: Sendable, Equatable {
        case message(WebSocketMessage)
        case ping(Data)
        case pong(Data)
        /// The peer's close frame: its code (`nil` when it had none, 1005) and reason.
        case close(WebSocketCloseCode?, String)
    }

    /// Decompresses a whole message's payload, to at most the given number of bytes.
    package typealias Inflate = (Data, _ limit: Int) throws(WebSocketProtocolViolation) -> Data

    /// The largest message, in bytes after decompression.
    let maximumMessageSize: Int
    /// How compressed messages are decompressed; `nil` when compression was not agreed on.
    private let inflate: Inflate?

    /// The type of the message being assembled; `nil` between messages.
    private var opcode: WebSocketFrame.Opcode?
    private var isCompressed = false
    private var payload = Data()
    private var utf8 = UTF8Validator()

    package init(maximumMessageSize: Int, inflate: Inflate? = nil) {
        self.maximumMessageSize = maximumMessageSize
        self.inflate = inflate
    }

    /// The event `frame` completes, or `nil` for a fragment that does not end its message.
    package mutating func receive(_ frame: WebSocketFrame) throws(WebSocketProtocolViolation) -> Event? {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close: return try Self.close(frame.payload)
        case .text, .binary:
            guard opcode == nil else {
                throw .protocolError("the server began a new message before the last one's final fragment")
            }
            opcode = frame.opcode
            isCompressed = frame.isCompressed
        case .continuation:
            guard opcode != nil else { throw .protocolError("the server sent a continuation frame outside a message") }
        }
        try append(frame.payload)
        return frame.isFinal ? try finish() : nil
    }

    private mutating func append(_ bytes: Data) throws(WebSocketProtocolViolation) {
        // A compressed payload may be a little longer than what it decompresses to.
        let limit = isCompressed ? Self.compressedLimit(of: maximumMessageSize) : maximumMessageSize
        guard bytes.count <= limit - payload.count else { throw Self.tooBig(maximumMessageSize) }
        if opcode == .text, !isCompressed, !utf8.consume(bytes) {
            throw Self.invalidUTF8
        }
        payload.append(bytes)
    }

    private mutating func finish() throws(WebSocketProtocolViolation) -> Event {
        defer {
            opcode = nil
            payload = Data()
            utf8 = UTF8Validator()
        }
        var bytes = payload
        if isCompressed {
            guard let inflate else { throw .protocolError("the server compressed a message without agreeing to") }
            bytes = try inflate(bytes, maximumMessageSize)
        }
        guard opcode == .text else { return .message(.binary(bytes)) }
        // Uncompressed text was checked fragment by fragment; it must also end with a whole character.
        if isCompressed, !utf8.consume(bytes) { throw Self.invalidUTF8 }
        guard utf8.isAtBoundary else { throw Self.invalidUTF8 }
        return .message(.text(String(decoding: bytes, as: UTF8.self)))
    }

    private static func close(_ payload: Data) throws(WebSocketProtocolViolation) -> Event {
        guard !payload.isEmpty else { return .close(nil, "") }
        guard payload.count >= 2 else { throw .protocolError("the server sent a close frame of one byte") }
        let code = WebSocketCloseCode(
            rawValue: UInt16(payload[payload.startIndex]) << 8 | UInt16(payload[payload.startIndex + 1]))
        guard code.isAllowedOnTheWire else {
            throw .protocolError("the server closed with the code \(code), which may not be sent")
        }
        let reason = payload.dropFirst(2)
        var utf8 = UTF8Validator()
        guard utf8.consume(reason), utf8.isAtBoundary else { throw invalidUTF8 }
        return .close(code, String(decoding: reason, as: UTF8.self))
    }

    /// The most bytes a compressed message of at most `limit` bytes may take: deflate can make
    /// data a little longer. Never past `Int.max`, whatever `limit` is.
    static func compressedLimit(of limit: Int) -> Int {
        let (total, overflows) = limit.addingReportingOverflow(max(limit, 0) / 64 + 64)
        return overflows ? .max : total
    }

    private static let invalidUTF8 = WebSocketProtocolViolation(
        code: .invalidFramePayloadData, reason: "the server sent text that is not valid UTF-8")

    private static func tooBig(_ limit: Int) -> WebSocketProtocolViolation {
        WebSocketProtocolViolation(code: .messageTooBig, reason: "a message over the limit of \(limit) bytes")
    }
}
