import Foundation

/// werkzeug's `multipart/form-data` decoder (`sansio/multipart.py` with Flask's limits), run
/// over a whole body: CRLF, LF or CR line breaks, transport padding after boundaries, part
/// headers with continuation lines. A body it cannot parse throws, and httpbin then shows an
/// empty `form` and `files`.
enum MultipartFormData {
    struct Part {
        /// `nil` when the part's `Content-Disposition` has no `name`; httpbin shows it as `null`.
        var name: String?
        /// Whether `Content-Disposition` has a `filename` parameter, even an empty one.
        var isFile: Bool
        var contentType: String?
        var body: Data

        /// A field's value as werkzeug decodes it: the part's charset if it is one werkzeug
        /// knows, else UTF-8, invalid bytes replaced.
        var text: String {
            let charset = contentType.flatMap { HeaderOptions($0).parameters["charset"]?.lowercased() } ?? "utf-8"
            let known = ["ascii", "us-ascii", "utf-8", "iso-8859-1"].contains(charset)
            return HeaderOptions.decode(body, charset: known ? charset : "utf-8")
        }
    }

    enum Failure: Error {
        case malformed
        /// Flask's `MAX_FORM_MEMORY_SIZE` or `MAX_FORM_PARTS` exceeded: httpbin answers 413.
        case tooLarge
    }

    static let maxFieldSize = 500_000
    static let maxParts = 1000

    static func parse(_ body: Data, boundary: String) throws(Failure) -> [Part] {
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        let first = findBoundary(delimiter, in: bytes, from: 0, lineBreakRequired: false)
        try checkBuffered(0..<(first?.end ?? bytes.count), total: bytes.count)
        guard var boundaryMatch = first else { throw .malformed }
        var parts: [Part] = []
        while !boundaryMatch.isFinal {
            let blank = findBlankLine(in: bytes, from: boundaryMatch.end)
            try checkBuffered(boundaryMatch.end..<(blank?.end ?? bytes.count), total: bytes.count)
            guard let blank else { throw .malformed }
            let headers = try parseHeaders(bytes[boundaryMatch.end..<blank.start])
            guard let disposition = headers.first("Content-Disposition") else { throw .malformed }
            guard parts.count < maxParts else { throw .tooLarge }
            let options = HeaderOptions(disposition).parameters
            let isFile = options["filename"] != nil

            // The blank line's second line break starts the body, and may also be the one
            // before the next boundary when the body is empty.
            let headersEnd = (blank.start + blank.end) / 2
            let bodyStart = headersEnd + lineBreakLength(in: bytes, at: headersEnd)
            guard let next = findBoundary(delimiter, in: bytes, from: headersEnd, lineBreakRequired: true) else {
                if !isFile && bytes.count - bodyStart > maxFieldSize { throw .tooLarge }
                throw .malformed
            }
            let partBody = bytes[bodyStart..<max(bodyStart, next.start)]
            if !isFile && partBody.count > maxFieldSize { throw .tooLarge }
            parts.append(
                Part(
                    name: options["name"], isFile: isFile, contentType: headers.first("Content-Type"),
                    body: Data(partBody)))
            boundaryMatch = next
        }
        try checkBuffered(boundaryMatch.end..<bytes.count, total: bytes.count)
        return parts
    }

    /// werkzeug reads the body 64 KiB at a time and keeps what it cannot parse yet (a preamble,
    /// a part's headers, the epilogue) in a buffer limited like a field: 413 when `span` outgrows
    /// it before its end arrives.
    private static func checkBuffered(_ span: Range<Int>, total: Int) throws(Failure) {
        let chunk = 64 * 1024
        var offset = (span.lowerBound / chunk + 1) * chunk
        while offset < span.upperBound {
            if offset - span.lowerBound + min(chunk, total - offset) > maxFieldSize { throw .tooLarge }
            offset += chunk
        }
    }

    // MARK: Scanning

    /// `LB --boundary ( -- [ws]* LB? | [ws]* LB )` at its leftmost position from `from`, where
    /// LB is CRLF, LF or CR and ws is space, tab, FF or VT; the leading LB is optional only
    /// before the first boundary.
    private static func findBoundary(
        _ delimiter: [UInt8], in bytes: [UInt8], from: Int, lineBreakRequired: Bool
    ) -> (start: Int, end: Int, isFinal: Bool)? {
        var searchFrom = from
        while let position = firstIndex(of: delimiter, in: bytes, from: searchFrom) {
            searchFrom = position + 1
            var start = position
            if position - 2 >= from && bytes[position - 2] == cr && bytes[position - 1] == lf {
                start = position - 2
            } else if position - 1 >= from && (bytes[position - 1] == cr || bytes[position - 1] == lf) {
                start = position - 1
            } else if lineBreakRequired {
                continue
            }
            var index = position + delimiter.count
            let isFinal = index + 1 < bytes.count && bytes[index] == dash && bytes[index + 1] == dash
            if isFinal { index += 2 }
            while index < bytes.count && [space, tab, 0x0B, 0x0C].contains(bytes[index]) { index += 1 }
            let lineBreak = lineBreakLength(in: bytes, at: index)
            guard isFinal || lineBreak > 0 else { continue }
            return (start, index + lineBreak, isFinal)
        }
        return nil
    }

    /// The first `\r\n\r\n`, `\r\r` or `\n\n` from `from`.
    private static func findBlankLine(in bytes: [UInt8], from: Int) -> (start: Int, end: Int)? {
        var index = from
        while index + 1 < bytes.count {
            let (first, second) = (bytes[index], bytes[index + 1])
            if first == cr && second == lf && index + 3 < bytes.count && bytes[index + 2] == cr
                && bytes[index + 3] == lf
            {
                return (index, index + 4)
            }
            if (first == cr || first == lf) && second == first { return (index, index + 2) }
            index += 1
        }
        return nil
    }

    private static func lineBreakLength(in bytes: [UInt8], at index: Int) -> Int {
        guard index < bytes.count, bytes[index] == cr || bytes[index] == lf else { return 0 }
        return bytes[index] == cr && index + 1 < bytes.count && bytes[index + 1] == lf ? 2 : 1
    }

    /// Part headers as werkzeug reads them: continuation lines joined, lines without a colon kept
    /// as a name with an empty value, and anything that is not UTF-8 failing the whole body.
    private static func parseHeaders(_ block: ArraySlice<UInt8>) throws(Failure) -> [HTTPHeader] {
        var joined: [UInt8] = []
        var index = block.startIndex
        while index < block.endIndex {
            let breakLength = block[index] == cr && index + 1 < block.endIndex && block[index + 1] == lf ? 2 : 1
            let isBreak = block[index] == cr || block[index] == lf
            if isBreak, index + breakLength < block.endIndex, [space, tab].contains(block[index + breakLength]) {
                joined.append(space)
                index += breakLength + 1
            } else {
                joined.append(block[index])
                index += 1
            }
        }
        var headers: [HTTPHeader] = []
        let asciiWhitespace: [UInt8] = [space, tab, cr, lf, 0x0B, 0x0C]
        for line in joined.split(whereSeparator: { $0 == cr || $0 == lf }) {
            let trimmed = line.drop { asciiWhitespace.contains($0) }.reversed().drop { asciiWhitespace.contains($0) }
            guard !trimmed.isEmpty else { continue }
            guard let text = String(bytes: trimmed.reversed(), encoding: .utf8) else { throw .malformed }
            let colon = text.firstIndex(of: ":") ?? text.endIndex
            headers.append(
                HTTPHeader(
                    text[..<colon].trimmingCharacters(in: .whitespacesAndNewlines),
                    text[colon...].dropFirst().trimmingCharacters(in: .whitespacesAndNewlines)))
        }
        return headers
    }

    private static func firstIndex(of needle: [UInt8], in bytes: [UInt8], from: Int) -> Int? {
        guard let head = needle.first else { return nil }
        var index = from
        while let candidate = bytes[min(index, bytes.count)...].firstIndex(of: head) {
            if bytes[candidate...].starts(with: needle) { return candidate }
            index = candidate + 1
        }
        return nil
    }
}

private let cr: UInt8 = 0x0D
private let lf: UInt8 = 0x0A
private let space: UInt8 = 0x20
private let tab: UInt8 = 0x09
private let dash: UInt8 = 0x2D
