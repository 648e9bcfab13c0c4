import Foundation

/// Collects one response's status line and header fields from libcurl's header callback, one
/// line at a time, across interim (1xx) responses.
package struct CurlResponseHead {
    /// The status of the response being read; `0` before its status line.
    package private(set) var statusCode = 0
    /// Field names in arrival order with their values; repeated fields keep every value.
    private(set) var fields: [(name: String, value: String)] = []

    /// What a header line completed.
    package enum Outcome {
        /// More lines to come.
        case incomplete
        /// A final (non-1xx) response's head ended.
        case complete
    }

    /// A head with no line read yet.
    package init() {}

    /// Takes one raw line, CRLF included. Works on bytes: this runs for every header line of every response.
    package mutating func take(_ line: UnsafeRawBufferPointer) -> Outcome {
        let bytes = line.bindMemory(to: UInt8.self)
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
        guard end > 0 else {
            // 101 switches protocols and is final; other 1xx are followed by the real response.
            return (100..<200).contains(statusCode) && statusCode != 101 ? .incomplete : .complete
        }
        let text = UnsafeBufferPointer(rebasing: bytes[0..<end])
        if text.starts(with: Self.statusLinePrefix) {
            statusCode = Self.statusCode(in: text)
            fields.removeAll(keepingCapacity: true)
        } else if Self.isBlank(text[0]), let last = fields.indices.last {
            // An obsolete folded line continues the previous field.
            fields[last].value += " " + Self.trimmed(text[...])
        } else if let colon = text.firstIndex(of: UInt8(ascii: ":")) {
            // Room for a usual head at once, rather than growing the array field by field.
            if fields.isEmpty { fields.reserveCapacity(16) }
            fields.append((Self.trimmed(text[..<colon]), Self.trimmed(text[(colon + 1)...])))
        }
        return .incomplete
    }

    private static let statusLinePrefix = Array("HTTP/".utf8)

    /// The three digits after the first space of a status line; `0` when there are none.
    private static func statusCode(in line: UnsafeBufferPointer<UInt8>) -> Int {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")) else { return 0 }
        let digits = line[(space + 1)...].prefix { (0x30...0x39).contains($0) }
        guard digits.count == 3 else { return 0 }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
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
