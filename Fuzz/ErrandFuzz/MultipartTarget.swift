import Errand
import Foundation

/// `multipart/form-data` bodies with boundaries, field names, file names and types from the
/// input. `contentLength()` must be the encoded size; the `Content-Type` must name the boundary
/// (quoted when it is no token); and reading the body back by RFC 2046 must give the parts as
/// written, whenever the boundary is a valid one that occurs in no part.
enum MultipartTarget {
    private static let boundaryAlphabet = ["a", "Z", "0", "-", "_", ".", "'", "(", "+", ",", "/", ":", "=", "?", " "]
    private static let textAlphabet = ["a", "b", "\"", "\r", "\n", "-", ";", "=", " ", "é", "\\", "%"]

    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let boundary =
            input.bool() ? input.string(from: boundaryAlphabet, upTo: 80) : input.string(upTo: 80)
        var form = MultipartFormData(boundary: boundary)
        var parts: [(name: String, data: [UInt8])] = []
        for _ in 0..<Int(input.byte()) % 5 {
            let name = input.string(from: textAlphabet, upTo: 12)
            var bytes = input.bytes(upTo: 64)
            switch input.byte() % 3 {
            case 0:
                let text = String(decoding: bytes, as: UTF8.self)
                form.append(text, name: name)
                bytes = Array(text.utf8)
            case 1: form.append(Data(bytes), name: name, fileName: input.string(from: textAlphabet, upTo: 12))
            default: form.append(Data(bytes), name: name, mimeType: input.string(from: textAlphabet, upTo: 12))
            }
            parts.append((name, bytes))
        }
        guard let body = try? form.encodedData(), let length = try? form.contentLength() else {
            fatalError("a form of in-memory parts does not encode")
        }
        require(length == Int64(body.count), "contentLength \(length), encoded \(body.count) bytes")

        // RFC 2046: 1 to 70 characters of `bchars`, not ending with a space. Any other boundary is
        // the caller's mistake, which a line break in it turns into a failed request.
        let isValid =
            (1...70).contains(boundary.utf8.count) && boundary.last != " "
            && boundary.utf8.allSatisfy { Self.isBoundaryByte($0) }
        guard isValid else { return }
        let contentType = form.contentType
        let named = contentType.dropFirst("multipart/form-data; boundary=".count)
        let isToken = boundary.utf8.allSatisfy { Self.isTokenByte($0) }
        require(named == (isToken ? boundary : "\"\(boundary)\""), "\(contentType) for boundary \(boundary)")
        // Inside quotes only `"` and `\` would need escaping, and neither is a `bchar`.
        let delimiter = Array("\r\n--\(boundary)".utf8)
        let delimitsEarly = parts.contains {
            firstRange(of: delimiter, in: ($0.data + delimiter)[...])?.lowerBound != $0.data.count
        }
        guard !delimitsEarly else { return }
        let read = split([UInt8](body), boundary: boundary)
        require(read.count == parts.count, "\(read.count) parts read back, \(parts.count) written")
        for (read, written) in zip(read, parts) {
            require(read == written.data, "a part reads back as \(read), written as \(written.data)")
        }
    }

    /// The parts' bodies, by RFC 2046: after each delimiter line, the header block, up to the next delimiter.
    private static func split(_ body: [UInt8], boundary: String) -> [[UInt8]] {
        let opening = Array("--\(boundary)\r\n".utf8)
        let delimiter = Array("\r\n--\(boundary)".utf8)
        guard body.starts(with: opening) || body == Array("--\(boundary)--\r\n".utf8) else {
            fatalError("the body does not open with its boundary")
        }
        var parts: [[UInt8]] = []
        var rest = ArraySlice(body)
        while rest.starts(with: opening) {
            rest = rest.dropFirst(opening.count)
            guard let blank = firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A], in: rest),
                let end = firstRange(of: delimiter, in: rest[blank.upperBound...])
            else { fatalError("a part without its header block or its end") }
            parts.append(Array(rest[blank.upperBound..<end.lowerBound]))
            rest = rest[(end.lowerBound + 2)...]
        }
        require(Array(rest) == Array("--\(boundary)--\r\n".utf8), "the body does not close with its boundary")
        return parts
    }

    private static func firstRange(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Range<Int>? {
        guard needle.count <= haystack.count else { return nil }
        var start = haystack.startIndex
        while start + needle.count <= haystack.endIndex {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return start..<start + needle.count }
            start += 1
        }
        return nil
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || "!#$%&'*+-.^_`|~".utf8.contains(byte)
    }

    private static func isBoundaryByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || "'()+_,-./:=? ".utf8.contains(byte)
    }
}
