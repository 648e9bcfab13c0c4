/// werkzeug's `parse_options_header`: a header value such as `Content-Type` or
/// `Content-Disposition` split into its main value and its `key=value` parameters, the way
/// httpbin sees them (keys lower-cased, quotes and escapes removed, RFC 2231 `key*=` and
/// `key*0=` decoded, invalid parts skipped, the last of a repeated key winning).
struct HeaderOptions {
    var value: String
    var parameters: [String: String]

    init(_ header: String) {
        let semicolon = header.firstIndex(of: ";") ?? header.endIndex
        value = header[..<semicolon].trimmingCharacters(in: .whitespaces)
        parameters = [:]
        var rest = Substring(header[semicolon...].dropFirst()).drop { $0 == " " || $0 == "\t" }
        guard !value.isEmpty, !rest.isEmpty else { return }

        var parts: [(key: String, value: Substring)] = []
        while true {
            let key = rest.prefix(while: Self.isTokenCharacter)
            if !key.isEmpty, rest.dropFirst(key.count).first == "=" {
                rest = rest.dropFirst(key.count + 1)
                let token = rest.prefix(while: Self.isTokenCharacter)
                if !token.isEmpty {
                    parts.append((key.lowercased(), token))
                } else if let closing = Self.closingQuote(in: rest) {
                    parts.append((key.lowercased(), rest[...closing]))
                    rest = rest[rest.index(after: closing)...]
                }
            }
            guard let next = rest.firstIndex(of: ";") else { break }
            rest = rest[rest.index(after: next)...].drop { $0.isWhitespace }
        }

        var continuedEncoding: String?
        for (partKey, value) in parts {
            var key = partKey
            var text = String(value)
            if key.hasSuffix("*") {
                key.removeLast()
                var encoding: String?
                if let marker = Self.charsetMarker(value) {
                    encoding = marker.charset.lowercased()
                    text = String(marker.value)
                }
                if encoding?.isEmpty ?? true { encoding = continuedEncoding }
                if let encoding, ["ascii", "us-ascii", "utf-8", "iso-8859-1"].contains(encoding) {
                    continuedEncoding = encoding
                    text = Self.percentDecoded(text, encoding: encoding)
                }
            }
            if text.count >= 1, text.first == "\"", text.last == "\"" {
                // HTTP headers escape quotes with a backslash, multipart form data writes %22.
                text = String(text.dropFirst().dropLast())
                    .replacingOccurrences(of: "\\\\", with: "\\")
                    .replacingOccurrences(of: "\\\"", with: "\"")
                    .replacingOccurrences(of: "%22", with: "\"")
            }
            // RFC 2231 continuations: `key*0=a; key*1=b` is `key=ab`.
            if let star = key.lastIndex(of: "*"), key[key.index(after: star)...].allSatisfy(\.isASCIIDigit),
                star < key.index(before: key.endIndex)
            {
                let base = String(key[..<star])
                parameters[base, default: ""] += text
            } else {
                parameters[key] = text
            }
        }
    }

    /// RFC 9110 `tchar` plus `_`, which werkzeug's `\w` admits: `[\w!#$%&'*+\-.^`|~]`, ASCII only.
    private static func isTokenCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "_!#$%&'*+-.^`|~".contains(character))
    }

    /// The closing quote of the quoted string `text` starts with, skipping `\\` and `\"`.
    private static func closingQuote(in text: Substring) -> Substring.Index? {
        guard text.first == "\"" else { return nil }
        var index = text.index(after: text.startIndex)
        while index < text.endIndex {
            let next = text.index(after: index)
            if text[index] == "\\", next < text.endIndex, text[next] == "\\" || text[next] == "\"" {
                index = text.index(after: next)
            } else if text[index] == "\"" {
                return index
            } else {
                index = next
            }
        }
        return nil
    }

    /// `charset'language'value` of an RFC 2231 extended value, when it has that shape.
    private static func charsetMarker(_ value: Substring) -> (charset: Substring, value: Substring)? {
        let pieces = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        let plain: (Character) -> Bool = { isTokenCharacter($0) && $0 != "'" }
        guard pieces.count == 3, pieces[0].allSatisfy(plain), pieces[1].allSatisfy(plain), !pieces[2].isEmpty,
            pieces[2].allSatisfy(isTokenCharacter)
        else {
            return nil
        }
        return (pieces[0], pieces[2])
    }

    /// Python's `unquote(text, encoding, errors="replace")`.
    private static func percentDecoded(_ text: String, encoding: String) -> String {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            if byte == UInt8(ascii: "%"), input.count >= 2, input.prefix(2).allSatisfy(\.isHexDigitByte),
                let decoded = UInt8(String(decoding: input.prefix(2), as: UTF8.self), radix: 16)
            {
                bytes.append(decoded)
                input = input.dropFirst(2)
            } else {
                bytes.append(byte)
            }
        }
        return decode(bytes, charset: encoding)
    }

    /// Bytes decoded as Python does with `errors="replace"`, for the charsets werkzeug accepts.
    static func decode(_ bytes: some Collection<UInt8>, charset: String) -> String {
        switch charset {
        case "iso-8859-1":
            String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        case "ascii", "us-ascii":
            String(String.UnicodeScalarView(bytes.map { $0 < 0x80 ? Unicode.Scalar($0) : "\u{FFFD}" }))
        default:
            String(decoding: bytes, as: UTF8.self)
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool {
        isASCII && isNumber
    }
}

extension UInt8 {
    fileprivate var isHexDigitByte: Bool {
        Character(Unicode.Scalar(self)).isHexDigit
    }
}
