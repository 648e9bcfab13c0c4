import Foundation

/// Collects one response's status line and header fields from libcurl's header callback, one
/// line at a time, across interim (1xx) responses.
struct CurlResponseHead {
    /// The status of the response being read; `0` before its status line.
    private(set) var statusCode = 0
    /// Field names in arrival order with their values; repeated fields keep every value.
    private(set) var fields: [(name: String, value: String)] = []

    /// What a header line completed.
    enum Outcome {
        /// More lines to come.
        case incomplete
        /// A final (non-1xx) response's head ended.
        case complete
    }

    /// Takes one raw line, CRLF included.
    mutating func take(_ line: UnsafeRawBufferPointer) -> Outcome {
        let text = String(decoding: line, as: UTF8.self)
        let trimmed = text.trimmingCharacters(in: .newlines)
        if trimmed.isEmpty {
            // 101 switches protocols and is final; other 1xx are followed by the real response.
            return (100..<200).contains(statusCode) && statusCode != 101 ? .incomplete : .complete
        }
        if trimmed.hasPrefix("HTTP/") {
            statusCode = trimmed.split(separator: " ", maxSplits: 2).dropFirst().first.flatMap { Int($0) } ?? 0
            fields.removeAll(keepingCapacity: true)
        } else if let first = trimmed.first, first == " " || first == "\t", let last = fields.indices.last {
            // An obsolete folded line continues the previous field.
            fields[last].value += " " + trimmed.trimmingCharacters(in: .whitespaces)
        } else if let colon = trimmed.firstIndex(of: ":") {
            let name = String(trimmed[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(trimmed[trimmed.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            fields.append((name, value))
        }
        return .incomplete
    }

    /// The fields as one dictionary: a repeated field's values joined with ", ", as URLSession
    /// does, under the spelling of its first occurrence.
    var headers: [String: String] {
        var headers: [String: String] = [:]
        var spelling: [String: String] = [:]
        for (name, value) in fields {
            let key = name.lowercased()
            if let existing = spelling[key] {
                headers[existing, default: ""] += ", " + value
            } else {
                spelling[key] = name
                headers[name] = value
            }
        }
        return headers
    }

    /// Every value of the field `name`, matched case-insensitively, unjoined (`Set-Cookie` values contain commas).
    func values(of name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }
}
