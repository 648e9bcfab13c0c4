import CErrandZlib
import Foundation

/// Compresses the client's messages for permessage-deflate (RFC 7692 §7.2.1): a raw deflate
/// stream cut at a sync flush, whose empty stored block's last four bytes are left off, with
/// the window size the server allowed, and a fresh context each message when it asked for one.
///
/// zlib's stream is made at the first message, and without context takeover freed after each:
/// a socket that sends nothing holds none.
package final class PerMessageDeflater {
    private var stream: UnsafeMutableRawPointer?
    private let resetsAfterEachMessage: Bool
    private let windowBits: Int32
    private let isHuffmanOnly: Bool

    /// A deflater for what the server agreed to; `nil` without zlib.
    package init?(_ parameters: PerMessageDeflateParameters) {
        guard errand_zlib_load() != 0 else { return nil }
        // zlib's raw deflate has no 256-byte window; Huffman coding alone refers to no earlier
        // bytes, so it suits a server that allowed only that.
        windowBits = Int32(max(parameters.clientMaxWindowBits, 9))
        isHuffmanOnly = parameters.clientMaxWindowBits == 8
        resetsAfterEachMessage = parameters.clientNoContextTakeover
    }

    deinit {
        stream.map(errand_deflater_destroy)
    }

    /// The compressed payload of a message holding `message`; `nil` when zlib could not make
    /// its stream, and the message is to go uncompressed, as RFC 7692 allows any message to.
    package func deflate(_ message: Data) -> Data? {
        guard let stream = stream ?? errand_deflater_create(windowBits, isHuffmanOnly ? 1 : 0) else { return nil }
        self.stream = stream
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        var offset = 0
        while true {
            var consumed = 0
            var produced = 0
            _ = message.withUnsafeBytes { messageBytes in
                chunk.withUnsafeMutableBufferPointer { chunkBytes in
                    errand_deflate(
                        stream, messageBytes.baseAddress.map { $0.assumingMemoryBound(to: UInt8.self) + offset },
                        messageBytes.count - offset, chunkBytes.baseAddress, chunkBytes.count, ERRAND_Z_SYNC_FLUSH,
                        &consumed, &produced)
                }
            }
            offset += consumed
            output.append(contentsOf: chunk[..<produced])
            // A flush is complete when input is used up and the output did not fill the chunk.
            if offset == message.count, produced < chunk.count { break }
            if consumed == 0, produced == 0 { break }
        }
        if output.suffix(4) == Data([0x00, 0x00, 0xFF, 0xFF]) { output.removeLast(4) }
        // Nothing new to flush gives no bytes at all; an empty stored block says "empty" (§7.2.3.6).
        if output.isEmpty { output = Data([0x00]) }
        if resetsAfterEachMessage {
            errand_deflater_destroy(stream)
            self.stream = nil
        }
        return output
    }
}
