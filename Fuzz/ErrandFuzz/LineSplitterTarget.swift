import Errand
import Foundation

/// Line splitting of a body arriving in chunks of any size, both ways (LF only, and CR, LF or CRLF
/// as Server-Sent Events say), through both the byte and the decoding interfaces. The lines must be
/// those of splitting the whole body at once, and a line longer than the limit must fail, after
/// exactly the lines before it.
enum LineSplitterTarget {
    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let endsLineOnCarriageReturn = input.bool()
        let decoding = input.bool()
        let maximum = input.bool() ? Int(input.byte()) % 40 : 1 << 20
        let chunks = input.chunks()
        let stream = chunks.flatMap { $0 }
        let expected = reference(stream, endsLineOnCarriageReturn: endsLineOnCarriageReturn)

        var splitter = LineSplitter(maximumLineLength: maximum, endsLineOnCarriageReturn: endsLineOnCarriageReturn)
        var lines: [[UInt8]] = []
        var failed = false
        do throws(ErrandError) {
            for chunk in chunks {
                if decoding {
                    lines += try splitter.decode(Data(chunk)).map { Array($0.utf8) }
                } else {
                    try withExactBuffer(chunk) { (bytes) throws(ErrandError) in
                        try splitter.append(bytes) { (line) throws(ErrandError) in lines.append(Array(line)) }
                    }
                }
            }
            if decoding {
                lines += try splitter.decodeEnd().map { Array($0.utf8) }
            } else if let last = try splitter.finish() {
                lines.append(last)
            }
        } catch {
            guard case .responseTooLarge(let limit) = error else { fatalError("unexpected error \(error)") }
            require(limit == maximum, "the error names \(limit), not the limit \(maximum)")
            failed = true
        }
        let expectedLines = expected.map { decoding ? Array(String(decoding: $0, as: UTF8.self).utf8) : $0 }
        let firstTooLong = expected.firstIndex { $0.count > maximum }
        require(
            failed == (firstTooLong != nil), "failed: \(failed), a line too long at \(String(describing: firstTooLong))"
        )
        if let firstTooLong {
            // The array form loses the lines of the chunk that failed; the other hands each out at once.
            let before = Array(expectedLines[..<firstTooLong])
            require(
                decoding ? before.starts(with: lines) : lines == before,
                "before the long line: \(lines) instead of \(expectedLines[..<firstTooLong])")
        } else {
            require(lines == expectedLines, "lines \(lines) instead of \(expectedLines)")
        }
    }

    /// The lines of the whole stream: the last one even without a terminator. Without CR as a line
    /// end, a CR before LF belongs to the terminator and any other CR to the line.
    static func reference(_ stream: [UInt8], endsLineOnCarriageReturn: Bool) -> [[UInt8]] {
        var lines: [[UInt8]] = []
        var line: [UInt8] = []
        var index = 0
        while index < stream.count {
            let byte = stream[index]
            index += 1
            if byte == UInt8(ascii: "\n") {
                if !endsLineOnCarriageReturn, line.last == UInt8(ascii: "\r") { line.removeLast() }
                lines.append(line)
                line = []
            } else if byte == UInt8(ascii: "\r"), endsLineOnCarriageReturn {
                lines.append(line)
                line = []
                if index < stream.count, stream[index] == UInt8(ascii: "\n") { index += 1 }
            } else {
                line.append(byte)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
