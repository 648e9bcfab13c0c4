import Foundation

/// Where a response's body ends, read from its raw bytes, for a transfer that sends a body
/// produced while it is sent: libcurl ends a transfer only once both its directions have, and
/// such a response may end first (full duplex) while its request waits on the response to go on.
/// libcurl is asked then to hand the body over undecoded, and this reads its framing (RFC 9112
/// §6.3): none, `Content-Length` bytes, chunked, or up to the close.
struct CurlBodyFraming {
    private enum Framing {
        case none
        case length(remaining: Int64)
        case chunked(ChunkedBodyDecoder)
        case untilClose
    }

    /// What raw bytes amount to.
    struct Taken {
        /// The body's bytes, decoded.
        var pieces: [Data] = []
        /// The body ended with these bytes.
        var hasEnded = false
        /// The chunked framing broke, as no server may frame a body.
        var isMalformed = false
    }

    private var framing: Framing

    /// The framing of the body that follows a final head of `statusCode` with `head`'s fields,
    /// to a request of `method`.
    init(statusCode: Int, head: CurlResponseHead, method: String) {
        if method == "HEAD" || statusCode == 204 || statusCode == 304 {
            framing = .none
        } else if let coding = head.values(of: "Transfer-Encoding").flatMap({ $0.split(separator: ",") }).last {
            // Only a final chunked coding frames the body; any other runs to the close.
            framing = coding.trimmed.equalsIgnoringASCIICase("chunked") ? .chunked(ChunkedBodyDecoder()) : .untilClose
        } else if let length = head.values(of: "Content-Length").first.flatMap({ Int64($0.trimmed) }), length >= 0 {
            // libcurl refuses conflicting lengths itself.
            framing = length == 0 ? .none : .length(remaining: length)
        } else {
            framing = .untilClose
        }
    }

    /// Whether the head alone ends the response: it has no body.
    var hasNoBody: Bool {
        if case .none = framing { true } else { false }
    }

    /// The trailer section's lines, once a chunked body ended.
    var trailerLines: [[UInt8]] {
        if case .chunked(let decoder) = framing { decoder.trailerLines } else { [] }
    }

    /// Reads the next raw bytes.
    mutating func take(_ bytes: UnsafeRawBufferPointer) -> Taken {
        var taken = Taken()
        switch framing {
        case .none:
            taken.hasEnded = true
        case .length(let remaining):
            let count = Int(min(remaining, Int64(bytes.count)))
            taken.pieces = [Data(bytes.prefix(count))]
            framing = .length(remaining: remaining - Int64(count))
            taken.hasEnded = remaining == Int64(count)
        case .chunked(var decoder):
            taken.pieces = decoder.decode(Data(bytes))
            taken.hasEnded = decoder.isComplete
            taken.isMalformed = decoder.isMalformed
            framing = .chunked(decoder)
        case .untilClose:
            taken.pieces = [Data(bytes)]
        }
        return taken
    }
}
