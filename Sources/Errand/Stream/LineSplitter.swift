import Foundation

/// Splits bytes arriving in chunks of any size into lines, for a stream's `lines` and for the
/// Server-Sent Events parser. A line lying wholly inside one chunk is handed out in place, with no
/// copy; only a line spanning chunks is gathered, and never past `maximumLineLength`, so an endless
/// line cannot grow memory.
package struct LineSplitter {
    /// The longest line allowed, in bytes without its terminator; a longer one throws
    /// ``ErrandError/responseTooLarge(_:)`` with this value as soon as it is seen.
    let maximumLineLength: Int
    /// Whether CR ends a line on its own, as Server-Sent Events say (CRLF, LF or a lone CR). When
    /// `false` only LF ends one, a CR right before it is dropped, and any other CR stays in the line.
    let endsLineOnCarriageReturn: Bool
    /// The start of a line whose end has not arrived yet.
    private var partial: [UInt8] = []
    /// The last chunk ended with a CR that ended a line, so an LF opening the next chunk is the rest
    /// of that CRLF rather than an empty line.
    private var skipsLineFeed = false

    /// A splitter with nothing pending; see ``maximumLineLength`` and ``endsLineOnCarriageReturn``.
    package init(maximumLineLength: Int, endsLineOnCarriageReturn: Bool) {
        self.maximumLineLength = maximumLineLength
        self.endsLineOnCarriageReturn = endsLineOnCarriageReturn
    }

    /// Feeds the next chunk, calling `line` with every line it completes, in order and without its
    /// terminator. The bytes passed to `line` are valid only during that call.
    ///
    /// - Throws: ``ErrandError/responseTooLarge(_:)`` for a line longer than ``maximumLineLength``,
    ///   or what `line` throws; either way the splitter must not be fed again.
    package mutating func append(
        _ chunk: Data, line: (UnsafeRawBufferPointer) throws(ErrandError) -> Void
    ) throws(ErrandError) {
        try chunk.withBytes { (bytes) throws(ErrandError) in try append(bytes, line: line) }
    }

    /// Feeds the next chunk as raw bytes, valid only during the call; otherwise as the `Data` form.
    package mutating func append(
        _ bytes: UnsafeRawBufferPointer, line: (UnsafeRawBufferPointer) throws(ErrandError) -> Void
    ) throws(ErrandError) {
        let count = bytes.count
        var index = 0
        if skipsLineFeed, count > 0 {
            skipsLineFeed = false
            if bytes[0] == Self.lineFeed { index = 1 }
        }
        var lineStart = index
        while index < count {
            let byte = bytes[index]
            // Both terminators are below 14, so one comparison passes over almost every byte.
            guard byte <= Self.carriageReturn,
                byte == Self.lineFeed || (byte == Self.carriageReturn && endsLineOnCarriageReturn)
            else {
                index += 1
                continue
            }
            try endLine(bytes, from: lineStart, to: index, line: line)
            index += 1
            if byte == Self.carriageReturn {
                if index == count {
                    skipsLineFeed = true
                } else if bytes[index] == Self.lineFeed {
                    index += 1
                }
            }
            lineStart = index
        }
        try carry(bytes, from: lineStart, to: count)
    }

    /// Ends the stream: the last line when it had no terminator, else `nil`. The splitter is then
    /// empty, as if new.
    ///
    /// - Throws: ``ErrandError/responseTooLarge(_:)`` when that line, with a final CR that turned
    ///   out not to start a CRLF, is longer than ``maximumLineLength``.
    package mutating func finish() throws(ErrandError) -> [UInt8]? {
        skipsLineFeed = false
        guard !partial.isEmpty else { return nil }
        defer { partial = [] }
        guard partial.count <= maximumLineLength else { throw .responseTooLarge(maximumLineLength) }
        return partial
    }

    /// Feeds the next chunk and returns the lines it completes, decoded as UTF-8 with invalid bytes
    /// as U+FFFD. Decoding whole lines keeps a character split across chunks intact.
    mutating func appendDecoding(_ chunk: Data) throws(ErrandError) -> [String] {
        var lines: [String] = []
        try append(chunk) { (bytes) throws(ErrandError) in
            lines.append(String(decoding: bytes, as: UTF8.self))
        }
        return lines
    }

    /// Ends the stream: the last line, decoded as ``appendDecoding(_:)`` does, when it had no
    /// terminator, else `nil`.
    mutating func finishDecoding() throws(ErrandError) -> String? {
        try finish().map { String(decoding: $0, as: UTF8.self) }
    }

    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    /// Hands out the line ending at `end`: in place when it began in this chunk, else gathered.
    private mutating func endLine(
        _ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int,
        line: (UnsafeRawBufferPointer) throws(ErrandError) -> Void
    ) throws(ErrandError) {
        guard partial.isEmpty else {
            try carry(bytes, from: start, to: end)
            if !endsLineOnCarriageReturn, partial.last == Self.carriageReturn { partial.removeLast() }
            defer { partial.removeAll(keepingCapacity: true) }
            var failure: ErrandError?
            partial.withUnsafeBytes { gathered in
                do throws(ErrandError) {
                    try line(gathered)
                } catch {
                    failure = error
                }
            }
            if let failure { throw failure }
            return
        }
        var end = end
        if !endsLineOnCarriageReturn, end > start, bytes[end - 1] == Self.carriageReturn { end -= 1 }
        guard end - start <= maximumLineLength else { throw .responseTooLarge(maximumLineLength) }
        try line(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
    }

    /// Adds `bytes[start..<end]` to the pending line, refusing before it would pass the limit. A
    /// trailing CR is not counted when only LF ends lines: it may yet be half of a CRLF.
    private mutating func carry(_ bytes: UnsafeRawBufferPointer, from start: Int, to end: Int) throws(ErrandError) {
        guard start < end else { return }
        var length = partial.count + (end - start)
        if !endsLineOnCarriageReturn, bytes[end - 1] == Self.carriageReturn { length -= 1 }
        guard length <= maximumLineLength else { throw .responseTooLarge(maximumLineLength) }
        partial.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
    }
}
