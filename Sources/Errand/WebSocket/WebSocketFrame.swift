import Foundation

/// One WebSocket frame (RFC 6455 §5.2): what ``WebSocketFrameDecoder`` reads and a client writes.
package struct WebSocketFrame: Sendable, Equatable {
    /// What a frame carries.
    package enum Opcode: UInt8, Sendable {
        case continuation = 0x0
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
        case pong = 0xA

        /// Close, ping and pong: never fragmented, at most 125 bytes, allowed between a message's fragments.
        package var isControl: Bool { rawValue & 0x8 != 0 }
    }

    /// The largest payload of a control frame.
    static let maximumControlPayload = 125

    package var opcode: Opcode
    /// Whether this is a message's last (or only) frame.
    package var isFinal = true
    /// RSV1, which permessage-deflate sets on a compressed message's first frame.
    package var isCompressed = false
    package var payload: Data

    /// The frame's bytes, big-endian: as a client must send it (§5.3), masked with
    /// `maskingKey`; as a server does, unmasked, when `maskingKey` is `nil`.
    package func encoded(maskingKey: UInt32?) -> Data {
        let mask: UInt8 = maskingKey == nil ? 0 : 0x80
        var frame = Data(capacity: payload.count + 14)
        frame.append((isFinal ? 0x80 : 0) | (isCompressed ? 0x40 : 0) | opcode.rawValue)
        switch payload.count {
        case ..<126:
            frame.append(mask | UInt8(payload.count))
        case ...0xFFFF:
            frame.append(mask | 126)
            frame.append(contentsOf: [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)])
        default:
            frame.append(mask | 127)
            frame.append(
                contentsOf: (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(payload.count) >> ($0 * 8)) })
        }
        guard let maskingKey else {
            frame.append(payload)
            return frame
        }
        let keyBytes = (0..<4).reversed().map { UInt8(truncatingIfNeeded: maskingKey >> ($0 * 8)) }
        frame.append(contentsOf: keyBytes)
        let start = frame.count
        frame.append(payload)
        frame.withUnsafeMutableBytes { bytes in
            Self.mask(UnsafeMutableRawBufferPointer(rebasing: bytes[start...]), with: keyBytes)
        }
        return frame
    }

    /// XORs `bytes` with the four bytes of `key`, repeated (§5.3): masking and unmasking alike,
    /// eight bytes at a time.
    static func mask(_ bytes: UnsafeMutableRawBufferPointer, with key: [UInt8]) {
        guard key.count == 4 else { return }
        // The key twice over as it lies in memory, whatever the host's byte order.
        let pattern = (key + key).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        var index = 0
        while index + 8 <= bytes.count {
            let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            bytes.storeBytes(of: word ^ pattern, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            bytes[index] ^= key[index & 3]
            index += 1
        }
    }

    /// A close frame's payload: the code, big-endian, then the reason in UTF-8 cut to fit 125 bytes
    /// at a character boundary; empty without a code.
    static func closePayload(_ code: WebSocketCloseCode?, reason: String) -> Data {
        guard let code else { return Data() }
        var payload = Data([UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)])
        var reason = Substring(reason)
        while reason.utf8.count > maximumControlPayload - 2 { reason.removeLast() }
        payload.append(contentsOf: reason.utf8)
        return payload
    }
}
