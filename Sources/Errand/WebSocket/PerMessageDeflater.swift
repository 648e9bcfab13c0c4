import CErrandZlib
import Foundation

/// Compresses the client's messages for permessage-deflate (RFC 7692 §7.2.1): a raw deflate
/// stream cut at a sync flush, whose empty stored block's last four bytes are left off, with
/// the window size the server allowed, and a fresh context each message when it asked for one.
package final class PerMessageDeflater {
    private let stream: UnsafeMutableRawPointer
    private let resetsAfterEachMessage: Bool

    /// A deflater for what the server agreed to; `nil` without zlib.
    package init?(_ parameters: PerMessageDeflateParameters) {
        // zlib's raw deflate has no 256-byte window; Huffman coding alone refers to no earlier
        // bytes, so it suits a server that allowed only that.
        let window = max(parameters.clientMaxWindowBits, 9)
        guard let stream = errand_deflater_create(Int32(window), parameters.clientMaxWindowBits == 8 ? 1 : 0) else {
            return nil
        }
        self.stream = stream
        resetsAfterEachMessage = parameters.clientNoContextTakeover
    }

    deinit {
        errand_deflater_destroy(stream)
    }

    /// The compressed payload of a message holding `message`.
    package func deflate(_ message: Data) -> Data {
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
        if resetsAfterEachMessage { errand_deflater_reset(stream) }
        return output
    }
}
