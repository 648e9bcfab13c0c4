import Errand
import Foundation

/// Response heads as libcurl hands them over, a line at a time: status lines, fields, folded
/// lines, repeated fields, interim responses. Checks that the joined header dictionary agrees
/// with the fields read one by one, whichever way it was built.
enum ResponseHeadTarget {
    static func run(_ data: Data) {
        var head = CurlResponseHead()
        var lines: [[UInt8]] = []
        var line: [UInt8] = []
        for byte in data {
            line.append(byte)
            if byte == UInt8(ascii: "\n") {
                lines.append(line)
                line = []
            }
        }
        if !line.isEmpty { lines.append(line) }
        // Checked once, at the end: checking at every blank line made an input of many short
        // heads cost quadratic time, for no more coverage.
        for line in lines { _ = withExactBuffer(line) { head.take($0) } }
        // A name that is not ASCII (no HTTP token) may equal another only as a Swift string, under
        // whose key `headers` joins both while `values(of:)` compares bytes; such heads only must
        // not crash. CurlResponseHeadTests.fieldNamesEqualOnlyAsUnicodeKeepEveryValue covers them.
        let namesAreASCII = lines.allSatisfy { line in
            line[..<(line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex)].allSatisfy { $0 < 0x80 }
        }
        if namesAreASCII { check(head) }
        _ = head.headers
    }

    private static func check(_ head: CurlResponseHead) {
        require((0...999).contains(head.statusCode), "status \(head.statusCode) is not three digits")
        let headers = head.headers
        // Sixteen names at most: each lookup scans every field, and a head may hold thousands.
        for (name, joined) in headers.prefix(16) {
            let values = head.values(of: name)
            require(!values.isEmpty, "\(name) is in the headers but has no field")
            require(joined == values.joined(separator: ", "), "\(name): \(joined) is not its values joined: \(values)")
        }
        let distinct = Set(headers.keys.map { $0.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 } })
        require(distinct.count == headers.count, "two header keys differ only in case: \(headers.keys.sorted())")
    }
}
