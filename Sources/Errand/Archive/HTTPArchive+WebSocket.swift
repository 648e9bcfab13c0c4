import Foundation

extension HTTPArchive {
    /// One WebSocket message in an entry's `_webSocketMessages`, as Chrome's HAR export writes it.
    struct SocketMessage: Codable, Equatable, Sendable {
        /// `"send"` for the client's, `"receive"` for the server's.
        var type: String
        /// When it was sent or received, in seconds since 1970.
        var time: Double
        /// 1 for text, 2 for binary.
        var opcode: Int
        /// The text, or a binary message's bytes in base64.
        var data: String
    }
}

extension HAREntryBuilder {
    /// A message as the socket sent or received it, before redaction.
    struct SocketMessage: Sendable {
        var isSent: Bool
        var time: Date
        var message: WebSocketMessage

        var size: Int {
            switch message {
            case .text(let text): text.utf8.count
            case .binary(let data): data.count
            }
        }
    }

    /// The messages as the entry records them: a text message's JSON fields masked as a body's,
    /// then every masked value of the exchange, `secrets`, looked for in each.
    func archived(_ messages: [SocketMessage], secrets: inout [String]) -> [HTTPArchive.SocketMessage] {
        let masked = messages.map { recorded -> (SocketMessage, Data?) in
            switch recorded.message {
            case .text(let text): (recorded, redaction.body(Data(text.utf8), mimeType: "", masked: &secrets))
            case .binary(let data): (recorded, data)
            }
        }
        let scrubber = HARScrubber(secrets)
        return masked.map { recorded, data in
            let isText: Bool
            if case .text = recorded.message { isText = true } else { isText = false }
            let text =
                switch (data.map(scrubber.data), isText) {
                case (let bytes?, true): String(decoding: bytes, as: UTF8.self)
                case (let bytes?, false): bytes.base64EncodedString()
                // JSON that could not be parsed to mask its fields is not kept.
                case (nil, _): Redaction.placeholder
                }
            return HTTPArchive.SocketMessage(
                type: recorded.isSent ? "send" : "receive", time: recorded.time.timeIntervalSince1970,
                opcode: isText ? 1 : 2, data: text)
        }
    }
}
