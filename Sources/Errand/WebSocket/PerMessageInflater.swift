import CErrandZlib
import Foundation

/// Decompresses the messages a server compressed with permessage-deflate (RFC 7692 §7.2.2):
/// each payload is a raw deflate stream cut at a sync flush, continuing the last message's
/// window unless the server agreed to `server_no_context_takeover`.
///
/// zlib's stream is made at the first compressed message and kept (without context takeover,
/// reset after each): a socket that receives nothing compressed holds none, and one that does
/// pays for the stream once.
package final class PerMessageInflater {
    private var stream: UnsafeMutableRawPointer?
    private let resetsAfterEachMessage: Bool

    /// An inflater for what the server agreed to; `nil` without zlib.
    package init?(_ parameters: PerMessageDeflateParameters) {
        guard errand_zlib_load() != 0 else { return nil }
        resetsAfterEachMessage = parameters.serverNoContextTakeover
    }

    deinit {
        stream.map(errand_inflater_destroy)
    }

    /// Frees the stream; the next message makes a new one.
    private func release() {
        stream.map(errand_inflater_destroy)
        stream = nil
    }

    /// The message `payload` decompresses to, of at most `limit` bytes.
    /// - Throws: 1009 past `limit`, 1002 for a payload that is not deflate data.
    package func inflate(_ payload: Data, limit: Int) throws(WebSocketProtocolViolation) -> Data {
        // Some senders compress an empty message to nothing at all.
        guard !payload.isEmpty else { return Data() }
        // Inflating with the largest window reads any smaller one the server may use.
        guard let stream = stream ?? errand_inflater_create(15) else {
            throw WebSocketProtocolViolation(code: .internalServerError, reason: "zlib could not allocate an inflater")
        }
        self.stream = stream
        // The sync flush's empty stored block, which the sender removed (§7.2.2).
        var input = payload
        input.append(contentsOf: [0x00, 0x00, 0xFF, 0xFF])
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        var offset = 0
        var endedStream = false
        while true {
            var consumed = 0
            var produced = 0
            let result = input.withUnsafeBytes { inputBytes in
                chunk.withUnsafeMutableBufferPointer { chunkBytes in
                    errand_inflate(
                        stream, inputBytes.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) + offset },
                        inputBytes.count - offset, chunkBytes.baseAddress, chunkBytes.count, &consumed, &produced)
                }
            }
            offset += consumed
            guard produced <= limit - output.count else {
                release()
                throw WebSocketProtocolViolation(
                    code: .messageTooBig, reason: "a compressed message over the limit of \(limit) bytes")
            }
            output.append(contentsOf: chunk[..<produced])
            if result == ERRAND_Z_STREAM_END {
                // A final block: the next message starts a new stream, whatever was agreed.
                endedStream = true
                break
            }
            guard result == ERRAND_Z_OK || result == ERRAND_Z_BUF_ERROR else {
                release()
                throw .protocolError("the server sent a compressed message that does not decompress")
            }
            if offset == input.count, produced < chunk.count { break }
            if consumed == 0, produced == 0 { break }
        }
        if endedStream || resetsAfterEachMessage { _ = errand_inflater_reset(stream) }
        return output
    }
}
