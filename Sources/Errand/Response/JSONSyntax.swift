import Foundation

/// Checks that a body is JSON without building it, for a response whose JSON nobody asked to see
/// yet: `JSONSerialization` makes an object for every value only for it to be thrown away, which
/// cost more than anything else Errand does with a small response.
///
/// It answers `true` only within a strict subset of JSON that `JSONSerialization` always
/// accepts: ASCII text, strings without `\u` escapes, numbers of at most 15 digits without an
/// exponent, nesting at most 64 deep, no byte order mark. `false` means "not certain": the
/// caller asks `JSONSerialization`, so what passes and what fails is exactly what it decides.
package enum JSONSyntax {
    /// Whether `data` is, for certain, a JSON document (a fragment such as `3` or `"a"` included).
    package static func isCertainlyValid(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            var scanner = Scanner(bytes: raw.bindMemory(to: UInt8.self))
            return scanner.document()
        }
    }

    /// A recursive descent over the bytes that gives up, returning `false`, at anything outside
    /// the subset.
    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var depth = 0

        static let maximumDepth = 64
        static let maximumDigits = 15

        private var next: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func document() -> Bool {
            skipWhitespace()
            guard value() else { return false }
            skipWhitespace()
            return index == bytes.count
        }

        private mutating func value() -> Bool {
            guard let next else { return false }
            switch next {
            case UInt8(ascii: "{"): return container(closedBy: UInt8(ascii: "}"), isObject: true)
            case UInt8(ascii: "["): return container(closedBy: UInt8(ascii: "]"), isObject: false)
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return false
            }
        }

        /// An object's members or an array's elements, from the opening bracket to `closing`.
        private mutating func container(closedBy closing: UInt8, isObject: Bool) -> Bool {
            depth += 1
            guard depth <= Self.maximumDepth else { return false }
            index += 1
            skipWhitespace()
            if next == closing {
                index += 1
                depth -= 1
                return true
            }
            while true {
                if isObject {
                    guard next == UInt8(ascii: "\""), string() else { return false }
                    skipWhitespace()
                    guard next == UInt8(ascii: ":") else { return false }
                    index += 1
                    skipWhitespace()
                }
                guard value() else { return false }
                skipWhitespace()
                switch next {
                case UInt8(ascii: ","):
                    index += 1
                    skipWhitespace()
                case closing:
                    index += 1
                    depth -= 1
                    return true
                default:
                    return false
                }
            }
        }

        private mutating func string() -> Bool {
            index += 1
            while let byte = next {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return true
                case UInt8(ascii: "\\"):
                    // `\u` escapes are left to Foundation, which judges surrogates its own way.
                    guard let escaped = next, Self.simpleEscapes.contains(escaped) else { return false }
                    index += 1
                case 0x20..<0x80:
                    continue
                default:
                    // A control character, which JSON forbids, or non-ASCII text, left to Foundation.
                    return false
                }
            }
            return false
        }

        private static let simpleEscapes: [UInt8] = Array(#""\/bfnrt"#.utf8)

        private mutating func number() -> Bool {
            if next == UInt8(ascii: "-") { index += 1 }
            var digits = 0
            // An integer part of `0`, or one that starts with another digit.
            guard let first = next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else { return false }
            if first == UInt8(ascii: "0") {
                index += 1
                digits = 1
            } else {
                digits = skipDigits()
            }
            if next == UInt8(ascii: ".") {
                index += 1
                let fraction = skipDigits()
                guard fraction > 0 else { return false }
                digits += fraction
            }
            // An exponent may overflow a `Double`, which Foundation may refuse: its call.
            if next == UInt8(ascii: "e") || next == UInt8(ascii: "E") { return false }
            return digits <= Self.maximumDigits
        }

        private mutating func skipDigits() -> Int {
            let start = index
            while let byte = next, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
            return index - start
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
                return false
            }
            index += count
            return true
        }

        private mutating func skipWhitespace() {
            while let byte = next,
                byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                    || byte == UInt8(ascii: "\t")
            {
                index += 1
            }
        }
    }
}
