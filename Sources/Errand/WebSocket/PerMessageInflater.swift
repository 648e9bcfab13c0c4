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
    /// What zlib writes into, made with the stream and reused by every message.
    private var scratch: [UInt8] = []
    private let resetsAfterEachMessage: Bool

    private static let scratchSize = 16 << 10
    private static let syncFlushTail = Data([0x00, 0x00, 0xFF, 0xFF])

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
        scratch = []
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
        if scratch.isEmpty { scratch = [UInt8](repeating: 0, count: Self.scratchSize) }
        var output = Data()
        // The payload, then the sync flush's empty stored block, which the sender removed (§7.2.2).
        var endedStream = try inflate(payload, into: &output, limit: limit, stream: stream)
        if !endedStream { endedStream = try inflate(Self.syncFlushTail, into: &output, limit: limit, stream: stream) }
        // After a final block the next message starts a new stream, whatever was agreed.
        if endedStream || resetsAfterEachMessage { _ = errand_inflater_reset(stream) }
        return output
    }

    /// Inflates `input` whole onto `output`; `true` when it ended the deflate stream.
    private func inflate(
        _ input: Data, into output: inout Data, limit: Int, stream: UnsafeMutableRawPointer
    ) throws(WebSocketProtocolViolation) -> Bool {
        var offset = 0
        while true {
            var consumed = 0
            var produced = 0
            let result = input.withUnsafeBytes { inputBytes in
                scratch.withUnsafeMutableBufferPointer { scratchBytes in
                    errand_inflate(
                        stream, inputBytes.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) + offset },
                        inputBytes.count - offset, scratchBytes.baseAddress, scratchBytes.count, &consumed, &produced)
                }
            }
            offset += consumed
            guard produced <= limit - output.count else {
                release()
                throw WebSocketProtocolViolation(
                    code: .messageTooBig, reason: "a compressed message over the limit of \(limit) bytes")
            }
            scratch.withUnsafeBufferPointer {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<produced]))
            }
            if result == ERRAND_Z_STREAM_END { return true }
            guard result == ERRAND_Z_OK || result == ERRAND_Z_BUF_ERROR else {
                release()
                throw .protocolError("the server sent a compressed message that does not decompress")
            }
            if offset == input.count, produced < scratch.count { return false }
            if consumed == 0, produced == 0 { return false }
        }
    }
}
