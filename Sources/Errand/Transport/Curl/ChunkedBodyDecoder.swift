import Foundation

/// Reads a body sent with `Transfer-Encoding: chunked` (RFC 9112 §7.1) as its bytes arrive, in
/// whatever pieces: each chunk's data, then the end once the last chunk and its trailer section
/// came. Strict where a lenient reading could be steered: a size of hex digits only (at most 15
/// of them), lines of at most ``lineLimit`` bytes, data followed by CRLF.
package struct ChunkedBodyDecoder: Sendable {
    private enum Step {
        /// Reading a chunk-size line (its extensions are ignored).
        case size
        /// Reading the data of a chunk: this many bytes left.
        case data(Int)
        /// The CRLF after a chunk's data.
        case dataEnd
        /// Trailer lines, until the empty one.
        case trailer
        case ended
        /// The framing broke: nothing more is body.
        case malformed
    }

    /// The longest size or trailer line read.
    static let lineLimit = 4096

    private var step = Step.size
    private var line: [UInt8] = []
    /// The trailer section's lines, CRLF removed, in order, bounded by ``CurlResponseHead/trailerLimit``.
    package private(set) var trailerLines: [[UInt8]] = []
    private var trailerBytes = 0

    package init() {}

    /// Whether the last chunk and its trailer section came: nothing after them is body.
    package var isComplete: Bool {
        if case .ended = step { true } else { false }
    }

    /// Whether the bytes broke the framing, as no server may: nothing after that is body.
    package var isMalformed: Bool {
        if case .malformed = step { true } else { false }
    }

    /// The body's bytes that `bytes` completes, in order, up to the body's end or the point where
    /// the framing broke (``isMalformed``); what follows is not read.
    package mutating func decode(_ bytes: Data) -> [Data] {
        var output: [Data] = []
        var index = bytes.startIndex
        while index < bytes.endIndex {
            switch step {
            case .ended, .malformed:
                return output
            case .data(let remaining):
                let count = min(remaining, bytes.endIndex - index)
                // A copy: a slice's indices would start where the read's did.
                output.append(Data(bytes[index..<index + count]))
                index += count
                step = remaining == count ? .dataEnd : .data(remaining - count)
            case .size, .dataEnd, .trailer:
                let byte = bytes[index]
                index += 1
                guard byte == 0x0A else {
                    guard line.count < Self.lineLimit else {
                        step = .malformed
                        return output
                    }
                    line.append(byte)
                    continue
                }
                if line.last == 0x0D { line.removeLast() }
                guard takeLine() else {
                    step = .malformed
                    return output
                }
                line.removeAll(keepingCapacity: true)
            }
        }
        return output
    }

    /// Acts on a whole line, its CRLF removed; `false` when it breaks the framing.
    private mutating func takeLine() -> Bool {
        switch step {
        case .size:
            let digits = line.prefix { $0 != UInt8(ascii: ";") && $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") }
            guard !digits.isEmpty, digits.count <= 15 else { return false }
            var size = 0
            for digit in digits {
                guard let value = digit.hexDigitValue else { return false }
                size = size << 4 | Int(value)
            }
            step = size == 0 ? .trailer : .data(size)
            return true
        case .dataEnd:
            guard line.isEmpty else { return false }
            step = .size
            return true
        case .trailer:
            guard !line.isEmpty else {
                step = .ended
                return true
            }
            trailerBytes += line.count + 2
            guard trailerBytes <= CurlResponseHead.trailerLimit else { return false }
            trailerLines.append(line)
            return true
        case .data, .ended, .malformed:
            return true
        }
    }
}
