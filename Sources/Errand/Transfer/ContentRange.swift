import Foundation

/// A `Content-Range: bytes first-last/total` value; `total` is `nil` for `*`.
package struct ContentRange {
    package let start: Int64
    package let end: Int64
    package let total: Int64?

    package init?(_ value: String?) {
        guard let value = value?.trimmed, value.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst("bytes ".count).split(separator: "/", omittingEmptySubsequences: false)
        guard spec.count == 2 else { return nil }
        let bounds = spec[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Int64(bounds[0].trimmed), let end = Int64(bounds[1].trimmed),
            start >= 0, end >= start
        else { return nil }
        let total = spec[1].trimmed
        if total == "*" {
            self.total = nil
        } else {
            guard let length = Int64(total), length > end else { return nil }
            self.total = length
        }
        self.start = start
        self.end = end
    }
}
