import Foundation

/// Collects one response's status line and header fields from libcurl's header callback, one
/// line at a time, across interim (1xx) responses, and the trailer fields that follow its body.
package struct CurlResponseHead {
    /// The status of the response being read; `0` before its status line.
    package private(set) var statusCode = 0
    /// Field names in arrival order with their values; repeated fields keep every value.
    private(set) var fields: [(name: String, value: String)] = []
    /// The trailer fields read after the body, in arrival order.
    private(set) var trailerFields: [(name: String, value: String)] = []
    /// Bytes of trailer lines taken so far, bounded by ``trailerLimit``.
    private var trailerBytes = 0
    /// Whether the next line must be a status line: the first of a head, and the first after an
    /// interim head.
    private var expectsStatusLine = true

    /// What a header line completed.
    package enum Outcome: Equatable {
        /// More lines to come.
        case incomplete
        /// An interim (1xx, not 101) head ended; the final one follows.
        case interim
        /// A final (non-1xx) response's head ended.
        case complete
        /// The line that should have been a status line is not one (`Http/1.1 200`, `HTTP/1.1
        /// 20`, a field before any status line): the answer is not HTTP. Carries the line, cut
        /// to 64 printable ASCII characters, for the error.
        case notHTTP(String)
    }

    /// A head with no line read yet.
    package init() {}

    /// Takes one raw line, CRLF included. Works on bytes: this runs for every header line of every response.
    package mutating func take(_ line: UnsafeRawBufferPointer) -> Outcome {
        let bytes = line.bindMemory(to: UInt8.self)
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        let text = UnsafeBufferPointer(rebasing: bytes[0..<end])
        if expectsStatusLine {
            guard let code = Self.statusCode(ofStatusLine: text) else { return .notHTTP(Self.printable(text)) }
            statusCode = code
            fields.removeAll(keepingCapacity: true)
            expectsStatusLine = false
            return .incomplete
        }
        guard end > 0 else {
            // 101 switches protocols and is final; other 1xx are followed by the real response.
            guard (100..<200).contains(statusCode), statusCode != 101 else { return .complete }
            expectsStatusLine = true
            return .interim
        }
        if Self.isBlank(text[0]), let last = fields.indices.last {
            // An obsolete folded line continues the previous field.
            fields[last].value += " " + Self.trimmed(text[...])
        } else if let field = Self.field(in: text) {
            // Room for a usual head at once, rather than growing the array field by field.
            if fields.isEmpty { fields.reserveCapacity(16) }
            fields.append(field)
        }
        return .incomplete
    }

    /// The most bytes of trailer lines a response may have, as libcurl bounds a head.
    package static let trailerLimit = 300 << 10

    /// Takes one raw trailer line, CRLF included; `false` once the trailers pass ``trailerLimit``.
    package mutating func takeTrailer(_ line: UnsafeRawBufferPointer) -> Bool {
        trailerBytes += line.count
        guard trailerBytes <= Self.trailerLimit else { return false }
        let bytes = line.bindMemory(to: UInt8.self)
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else { return true }
        let text = UnsafeBufferPointer(rebasing: bytes[0..<end])
        if Self.isBlank(text[0]), let last = trailerFields.indices.last {
            trailerFields[last].value += " " + Self.trimmed(text[...])
        } else if let field = Self.field(in: text) {
            trailerFields.append(field)
        }
        return true
    }

    /// The name and value of a `name: value` line; `nil` for a line without a colon.
    private static func field(in text: UnsafeBufferPointer<UInt8>) -> (name: String, value: String)? {
        guard let colon = text.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return (trimmed(text[..<colon]), trimmed(text[(colon + 1)...]))
    }

    /// The status code of `line` when it is a status line as RFC 9112 §4 has it — `HTTP/`, the
    /// version's digits (libcurl writes `HTTP/2` for the later versions), a space, three digits
    /// (100–999), then the end or a space and the reason — else `nil`. The name is case-sensitive:
    /// libcurl also takes `Http/1.1`, which no server speaking HTTP sends.
    private static func statusCode(ofStatusLine line: UnsafeBufferPointer<UInt8>) -> Int? {
        guard line.starts(with: statusLinePrefix) else { return nil }
        var rest = line[statusLinePrefix.count...]
        func isDigit(_ byte: UInt8?) -> Bool { byte.map { (0x30...0x39).contains($0) } ?? false }
        guard isDigit(rest.first) else { return nil }
        rest = rest.dropFirst()
        if rest.first == UInt8(ascii: ".") {
            rest = rest.dropFirst()
            guard isDigit(rest.first) else { return nil }
            rest = rest.dropFirst()
        }
        guard rest.first == UInt8(ascii: " ") else { return nil }
        rest = rest.dropFirst()
        let digits = rest.prefix(3)
        guard digits.count == 3, digits.allSatisfy({ isDigit($0) }) else { return nil }
        rest = rest.dropFirst(3)
        guard rest.isEmpty || rest.first == UInt8(ascii: " ") else { return nil }
        let code = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        return code >= 100 ? code : nil
    }

    private static let statusLinePrefix = Array("HTTP/".utf8)

    /// `line` for an error message: printable ASCII only, at most 64 characters.
    private static func printable(_ line: UnsafeBufferPointer<UInt8>) -> String {
        String(decoding: line.prefix(64).map { (0x20...0x7E).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")
    }

    private static func trimmed(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> String {
        var slice = bytes[...]
        while let first = slice.first, isBlank(first) { slice = slice.dropFirst() }
        while let last = slice.last, isBlank(last) { slice = slice.dropLast() }
        return String(decoding: slice, as: UTF8.self)
    }

    /// The fields as one dictionary: a repeated field's values joined with ", ", as URLSession
    /// does, under the spelling of its first occurrence.
    package var headers: [String: String] {
        Self.joined(fields)
    }

    /// The trailer fields as one dictionary, joined as ``headers`` are; empty when none came.
    package var trailers: [String: String] {
        Self.joined(trailerFields)
    }

    private static func joined(_ fields: [(name: String, value: String)]) -> [String: String] {
        // Sized at once: grown field by field, it was copied and rehashed three times.
        var headers = [String: String](minimumCapacity: fields.count)
        guard fields.count > Self.fieldsComparedInPlace else {
            for (index, (name, value)) in fields.enumerated() {
                if let first = fields[..<index].first(where: { $0.name.equalsIgnoringASCIICase(name) }) {
                    headers[first.name, default: ""] += ", " + value
                } else {
                    Self.add(value, as: name, to: &headers)
                }
            }
            return headers
        }
        var spelling = [String: String](minimumCapacity: fields.count)
        for (name, value) in fields {
            let key = name.asciiLowercased
            if let existing = spelling[key] {
                headers[existing, default: ""] += ", " + value
            } else {
                spelling[key] = name
                Self.add(value, as: name, to: &headers)
            }
        }
        return headers
    }

    /// Sets a field new to the head, or joins it to the value already under a key its name equals
    /// as a Swift string but not byte for byte: a name that is no HTTP token, such as `é` spelled
    /// precomposed and decomposed, or `K` spelled as the Kelvin sign. Set, one replaced the other.
    private static func add(_ value: String, as name: String, to headers: inout [String: String]) {
        guard let previous = headers.updateValue(value, forKey: name) else { return }
        headers[name] = previous + ", " + value
    }

    /// The most fields whose names are compared with each earlier one's, case aside, rather than
    /// through a dictionary of lower-cased names: a usual head's handful costs less that way, and
    /// a head of thousands stays linear.
    private static let fieldsComparedInPlace = 32

    /// Every value of the field `name`, matched case-insensitively, unjoined (`Set-Cookie` values contain commas).
    package func values(of name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// Whether `Content-Encoding` names a coding outside `codings` (lower-cased names).
    func isEncoded(outside codings: Set<String>) -> Bool {
        values(of: "Content-Encoding").flatMap { $0.split(separator: ",") }
            .contains { !codings.contains($0.trimmed.lowercased()) }
    }
}
