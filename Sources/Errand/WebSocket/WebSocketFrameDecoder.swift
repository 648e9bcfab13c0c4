import Foundation

/// Reads frames from the bytes a server sends, in whatever pieces they arrive, checking each
/// against RFC 6455 §5 as a client must: unmasked, no reserved bits or opcodes, control frames
/// whole and short, a length within the limit. Message rules (fragment order, UTF-8) are
/// ``WebSocketMessageAssembler``'s. With `readsClientFrames` it reads a client's frames as a
/// server does (a stub's peer): each must be masked, and is unmasked.
package struct WebSocketFrameDecoder: Sendable {
    /// The largest payload of one frame; a longer one is refused before it is buffered.
    let maximumPayload: Int
    /// Whether RSV1 may be set: permessage-deflate was agreed on.
    let allowsCompression: Bool
    /// Whether the frames are a client's, masked, rather than a server's.
    let readsClientFrames: Bool
    /// Who sends the frames, for the violations' reasons.
    private var sender: String { readsClientFrames ? "the client" : "the server" }

    private var buffer = Data()
    /// Where the next frame starts in `buffer`; what precedes it is dropped now and then, not at
    /// every frame, so small frames cost no copy each.
    private var start = 0

    package init(maximumPayload: Int, allowsCompression: Bool, readsClientFrames: Bool = false) {
        self.maximumPayload = maximumPayload
        self.allowsCompression = allowsCompression
        self.readsClientFrames = readsClientFrames
    }

    /// Bytes received and not yet part of a frame returned.
    var bufferedCount: Int { buffer.count - start }

    /// Adds bytes read from the socket.
    package mutating func append(_ bytes: Data) {
        // Between frames, as after most reads: take the bytes as they are rather than copy them.
        if start == buffer.count {
            buffer = bytes
            start = 0
            return
        }
        if start > 0, start >= buffer.count / 2 {
            buffer.removeSubrange(buffer.startIndex..<buffer.startIndex + start)
            start = 0
        }
        buffer.append(bytes)
    }

    /// The next whole frame, or `nil` until more bytes arrive.
    /// - Throws: the violation, as soon as the frame's header shows it.
    package mutating func nextFrame() throws(WebSocketProtocolViolation) -> WebSocketFrame? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let base = buffer.startIndex + start
        let first = buffer[base]
        let second = buffer[base + 1]
        let opcodeValue = first & 0x0F
        guard let opcode = WebSocketFrame.Opcode(rawValue: opcodeValue) else {
            throw .protocolError("\(sender) sent a frame with the reserved opcode \(opcodeValue)")
        }
        let isFinal = first & 0x80 != 0
        let isCompressed = first & 0x40 != 0
        guard first & 0x30 == 0 else {
            throw .protocolError("\(sender) set RSV2 or RSV3, which no extension agreed to")
        }
        if isCompressed, !allowsCompression || opcode.isControl || opcode == .continuation {
            throw .protocolError(
                allowsCompression
                    ? "\(sender) set RSV1 on a \(opcode) frame" : "\(sender) set RSV1 without agreeing to compression"
            )
        }
        guard (second & 0x80 != 0) == readsClientFrames else {
            throw .protocolError(
                readsClientFrames ? "the client sent an unmasked frame" : "the server sent a masked frame")
        }
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[base + 2]) << 8 | UInt64(buffer[base + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = (0..<8).reduce(0) { $0 << 8 | UInt64(buffer[base + 2 + $1]) }
            guard length >> 63 == 0 else { throw .protocolError("\(sender) sent a frame length with its top bit set") }
            headerLength = 10
        }
        if opcode.isControl {
            guard isFinal else { throw .protocolError("\(sender) fragmented a \(opcode) frame") }
            guard length <= WebSocketFrame.maximumControlPayload else {
                throw .protocolError("\(sender) sent a \(opcode) frame of \(length) bytes; at most 125 are allowed")
            }
        }
        guard length <= UInt64(maximumPayload) else {
            throw WebSocketProtocolViolation(
                code: .messageTooBig, reason: "a frame of \(length) bytes is over the limit of \(maximumPayload)")
        }
        let keyLength = readsClientFrames ? 4 : 0
        let total = headerLength + keyLength + Int(length)
        guard available >= total else { return nil }
        var payload = buffer.subdata(in: base + headerLength + keyLength..<base + total)
        if readsClientFrames {
            let key = Array(buffer[base + headerLength..<base + headerLength + 4])
            payload.withUnsafeMutableBytes { WebSocketFrame.mask($0, with: key) }
        }
        start += total
        return WebSocketFrame(opcode: opcode, isFinal: isFinal, isCompressed: isCompressed, payload: payload)
    }
}
