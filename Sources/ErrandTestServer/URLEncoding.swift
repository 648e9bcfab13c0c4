/// Percent-decoding the way werkzeug (httpbin's web layer) does it, so the values this server
/// echoes match what a real httpbin echoes for the same request.
enum URLEncoding {
    /// Decodes `%XX` escapes, and `+` as a space when `plusAsSpace`.
    ///
    /// Bytes listed in `keepingEncoded` keep their escape. Decoded bytes that are not valid
    /// UTF-8 come back as `%XX` (werkzeug's `url_quote` error handler) instead of U+FFFD, and a
    /// `%` not followed by two hex digits is left as it is (like Python's `unquote`).
    static func unquote(_ text: Substring, keepingEncoded: Set<UInt8> = [], plusAsSpace: Bool = false) -> String {
        let input = Array(text.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(input.count)
        var index = 0
        while index < input.count {
            let byte = input[index]
            if byte == UInt8(ascii: "%"), index + 2 < input.count,
                let high = hexValue(input[index + 1]), let low = hexValue(input[index + 2])
            {
                let decoded = high << 4 | low
                if keepingEncoded.contains(decoded) {
                    bytes.append(contentsOf: input[index...index + 2])
                } else {
                    bytes.append(decoded)
                }
                index += 3
            } else {
                bytes.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return decodeUTF8(bytes)
    }

    /// `application/x-www-form-urlencoded` pairs in order, as Python's
    /// `parse_qsl(keep_blank_values=True)`: `a` alone is `("a", "")`, empty pieces are skipped.
    static func parseForm(_ text: Substring) -> [(name: String, value: String)] {
        text.split(separator: "&").map { pair in
            guard let equals = pair.firstIndex(of: "=") else {
                return (unquote(pair, plusAsSpace: true), "")
            }
            return (
                unquote(pair[..<equals], plusAsSpace: true),
                unquote(pair[pair.index(after: equals)...], plusAsSpace: true)
            )
        }
    }

    /// The path as werkzeug's `uri_to_iri` shows it in httpbin's `url`: UTF-8 unescaped,
    /// reserved and unsafe characters still escaped.
    static func iriPath(_ path: Substring) -> String {
        unquote(path, keepingEncoded: alwaysEncoded.union("/?#".utf8))
    }

    /// The query as werkzeug's `uri_to_iri` shows it in httpbin's `url`.
    static func iriQuery(_ query: Substring) -> String {
        unquote(query, keepingEncoded: alwaysEncoded.union("&=+#".utf8))
    }

    /// Decodes UTF-8, writing each byte of an invalid sequence as `%XX`.
    static func decodeUTF8(_ bytes: [UInt8]) -> String {
        var result = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                result.unicodeScalars.append(Unicode.UTF8.decode(encoded))
                offset += encoded.count
            case .error(let length):
                for byte in bytes[offset..<offset + length] {
                    result +=
                        "%" + String(byte >> 4, radix: 16, uppercase: true)
                        + String(byte & 0xF, radix: 16, uppercase: true)
                }
                offset += length
            case .emptyInput:
                return result
            }
        }
    }

    /// Controls, space, `%` and DEL, which werkzeug never unescapes.
    private static let alwaysEncoded = Set<UInt8>(0...0x20).union([0x25, 0x7F])

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
