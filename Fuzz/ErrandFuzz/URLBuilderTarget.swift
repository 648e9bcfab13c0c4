import Errand
import Foundation

/// Request URL building: a `url` resolved against a base, both from the input. Encoding what a URL
/// may not hold must never encode anything twice (`%20` stays `%20`) nor change what the text
/// decodes to; and a relative `url` must resolve as RFC 3986, section 5.2, says, against the base
/// with a `/` ending its path.
enum URLBuilderTarget {
    private struct Request: BaseRequest {
        let url: String
        let baseUrl: String
    }

    private static let config = NetworkConfig()

    private static let schemes = ["http://", "https://", "HTTP://", "http:", "h2c+x.y://", ""]
    private static let hosts = [
        "h.example", "H.Example", "127.0.0.1", "[::1]", "u:p@h.example", "h.example:8080", "h.example:", "",
    ]
    private static let pieces = [
        "a", "b", "x", "/", "/", "/", "//", ".", "..", "./", "../", "?", "#", "&", "=", "%", "%2", "%20", "%2F", "%25",
        "%zz", " ", "[", "]", "@", ":", ";", "+", "é", "|", "\"", "{", "~", "http://", "h.example", "mailto:",
    ]

    static func run(_ data: Data) {
        var input = FuzzInput(data)
        let base: String
        if input.bool() {
            base = input.string(from: pieces + schemes, upTo: 10)
        } else {
            base =
                schemes[Int(input.byte()) % schemes.count] + hosts[Int(input.byte()) % hosts.count]
                + input.string(from: pieces, upTo: 6)
        }
        let path = input.bool() ? input.string(upTo: 24) : input.string(from: pieces, upTo: 8)
        // The query is Errand's own form encoding of the arguments: valid text.
        let query = input.string(from: ["a", "=", "&", "%20", "b", "+", "%2B"], upTo: 4)
        for text in [base, path, query] { checkEncoding(text) }

        let expected = self.expected(path: path, base: base, query: query)
        do {
            let url = try RequestURLBuilder.url(for: Request(url: path, baseUrl: base), config: config, query: query)
            require(url.scheme != nil && !(url.host ?? "").isEmpty, "\(url) has no scheme or host")
            if let expected {
                require(
                    url.absoluteString == expected,
                    "\(path) against \(base) with query \(query): \(url.absoluteString), RFC 3986 says \(expected)")
            }
        } catch {
            guard case .invalidURL = error else { fatalError("unexpected error \(error)") }
            if let expected, let url = URL(string: expected), url.scheme != nil, !(url.host ?? "").isEmpty {
                fatalError("\(path) against \(base) failed; RFC 3986 gives \(expected)")
            }
        }
    }

    // MARK: Encoding

    private static func checkEncoding(_ text: String) {
        let encoded = RequestURLBuilder.encodingInvalidCharacters(text)
        require(RequestURLBuilder.encodingInvalidCharacters(encoded) == encoded, "\(text) encodes twice: \(encoded)")
        require(decoded(encoded, strict: true) == decoded(text, strict: false), "\(text) became \(encoded)")
        require(encoded.utf8.filter { $0 == UInt8(ascii: "#") }.count <= 1, "two #s in \(encoded)")
    }

    /// The bytes `text` stands for: each `%XX` one byte. A `%` starting no escape is itself unless `strict`.
    private static func decoded(_ text: String, strict: Bool) -> [UInt8]? {
        let bytes = Array(text.utf8)
        var result: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count + 0, let high = hex(bytes[index + 1]),
                let low = hex(bytes[index + 2])
            {
                result.append(high << 4 | low)
                index += 3
            } else {
                if strict, bytes[index] == UInt8(ascii: "%") { return nil }
                result.append(bytes[index])
                index += 1
            }
        }
        return result
    }

    private static func hex(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: byte - 0x30
        case 0x41...0x46: byte - 0x41 + 10
        case 0x61...0x66: byte - 0x61 + 10
        default: nil
        }
    }

    // MARK: RFC 3986

    /// What the builder should give: an absolute `url` as it is; a relative one resolved against
    /// the base, its path ended by `/`; then `query` added. `nil` where RFC 3986 has no answer.
    private static func expected(path: String, base: String, query: String) -> String? {
        let reference = RequestURLBuilder.encodingInvalidCharacters(path)
        var target: String
        if let parts = Parts(reference), parts.scheme != nil {
            // An absolute `url` wins as it is, dot segments and all.
            guard let authority = parts.authority, !authority.isEmpty, isValid(authority: authority) else { return nil }
            target = reference
        } else {
            guard var baseParts = Parts(RequestURLBuilder.encodingInvalidCharacters(base)), baseParts.scheme != nil,
                let referenceParts = Parts(reference), let baseAuthority = baseParts.authority,
                !baseAuthority.isEmpty, isValid(authority: baseAuthority)
            else {
                // A base without a host (`aahttp:../x`) is no base; RFC 3986 resolves against it
                // to text that reads back differently (a path starting `//`).
                return nil
            }
            // Foundation keeps the dot segments of a network-path reference (`//host/../x`), which
            // RFC 3986 removes: a known disagreement, left alone.
            if let authority = referenceParts.authority {
                guard isValid(authority: authority), removeDotSegments(referenceParts.path) == referenceParts.path
                else { return nil }
            }
            if !baseParts.path.hasSuffix("/") { baseParts.path += "/" }
            target = resolve(referenceParts, against: baseParts).text
        }
        guard !query.isEmpty else { return target }
        let fragmentStart = target.firstIndex(of: "#") ?? target.endIndex
        let beforeFragment = target[..<fragmentStart]
        let separator =
            !beforeFragment.contains("?") ? "?" : (beforeFragment.last == "?" || beforeFragment.last == "&" ? "" : "&")
        target = beforeFragment + separator + query + target[fragmentStart...]
        return target
    }

    /// Whether an authority is RFC 3986's `[ userinfo "@" ] host [ ":" port ]`: at most one `@`,
    /// brackets only around a whole IPv6 host, a port of digits. Foundation percent-encodes any other its
    /// own way — an authority with two `@`s again, `%` included: a known disagreement, left alone.
    private static func isValid(authority: String) -> Bool {
        let parts = authority.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count <= 2, let hostAndPort = parts.last else { return false }
        if parts.count == 2, parts[0].contains(where: { $0 == "[" || $0 == "]" }) { return false }
        var port: Substring = ""
        if hostAndPort.hasPrefix("[") {
            guard let close = hostAndPort.firstIndex(of: "]"), hostAndPort.filter({ $0 == "[" || $0 == "]" }).count == 2
            else { return false }
            let literal = hostAndPort[hostAndPort.index(after: hostAndPort.startIndex)..<close]
            guard literal.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return false }
            let rest = hostAndPort[hostAndPort.index(after: close)...]
            guard rest.isEmpty || rest.hasPrefix(":") else { return false }
            port = rest.dropFirst()
        } else {
            guard !hostAndPort.contains(where: { $0 == "[" || $0 == "]" }) else { return false }
            if let colon = hostAndPort.firstIndex(of: ":") { port = hostAndPort[hostAndPort.index(after: colon)...] }
        }
        return port.allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// A URI reference split as RFC 3986, appendix B, splits it; `nil` when its first segment holds
    /// a `:` that does not end a scheme, which makes it no reference at all.
    struct Parts {
        var scheme: String?
        var authority: String?
        var path: String
        var query: String?
        var fragment: String?

        init(scheme: String?, authority: String?, path: String, query: String?, fragment: String?) {
            (self.scheme, self.authority, self.path, self.query, self.fragment) = (
                scheme, authority, path, query, fragment
            )
        }

        init?(_ text: String) {
            var rest = Substring(text)
            if let hash = rest.firstIndex(of: "#") {
                fragment = String(rest[rest.index(after: hash)...])
                rest = rest[..<hash]
            }
            if let question = rest.firstIndex(of: "?") {
                query = String(rest[rest.index(after: question)...])
                rest = rest[..<question]
            }
            if let colon = rest.firstIndex(of: ":"), !rest[..<colon].contains("/") {
                let name = rest[..<colon]
                guard let first = name.first, first.isASCII, first.isLetter,
                    name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) })
                else { return nil }
                scheme = String(name)
                rest = rest[rest.index(after: colon)...]
            }
            if rest.hasPrefix("//") {
                rest = rest.dropFirst(2)
                let end = rest.firstIndex(of: "/") ?? rest.endIndex
                authority = String(rest[..<end])
                rest = rest[end...]
            }
            path = String(rest)
        }

        var text: String {
            var result = ""
            if let scheme { result += scheme + ":" }
            if let authority { result += "//" + authority }
            result += path
            if let query { result += "?" + query }
            if let fragment { result += "#" + fragment }
            return result
        }
    }

    /// RFC 3986, section 5.2.2, strictly.
    static func resolve(_ reference: Parts, against base: Parts) -> Parts {
        if reference.scheme != nil {
            return Parts(
                scheme: reference.scheme, authority: reference.authority, path: removeDotSegments(reference.path),
                query: reference.query, fragment: reference.fragment)
        }
        if reference.authority != nil {
            return Parts(
                scheme: base.scheme, authority: reference.authority, path: removeDotSegments(reference.path),
                query: reference.query, fragment: reference.fragment)
        }
        if reference.path.isEmpty {
            return Parts(
                scheme: base.scheme, authority: base.authority, path: base.path, query: reference.query ?? base.query,
                fragment: reference.fragment)
        }
        let path: String
        if reference.path.hasPrefix("/") {
            path = removeDotSegments(reference.path)
        } else if base.authority != nil, base.path.isEmpty {
            path = removeDotSegments("/" + reference.path)
        } else {
            let directory = base.path.lastIndex(of: "/").map { base.path[...$0] } ?? ""
            path = removeDotSegments(directory + reference.path)
        }
        return Parts(
            scheme: base.scheme, authority: base.authority, path: path, query: reference.query,
            fragment: reference.fragment)
    }

    /// RFC 3986, section 5.2.4.
    static func removeDotSegments(_ path: String) -> String {
        var input = Substring(path)
        var output: [Substring] = []
        while !input.isEmpty {
            if input.hasPrefix("../") {
                input = input.dropFirst(3)
            } else if input.hasPrefix("./") {
                input = input.dropFirst(2)
            } else if input.hasPrefix("/./") {
                input = input.dropFirst(2)
            } else if input == "/." {
                input = "/"
            } else if input.hasPrefix("/../") {
                input = input.dropFirst(3)
                if !output.isEmpty { output.removeLast() }
            } else if input == "/.." {
                input = "/"
                if !output.isEmpty { output.removeLast() }
            } else if input == "." || input == ".." {
                input = ""
            } else {
                let start = input.hasPrefix("/") ? input.index(after: input.startIndex) : input.startIndex
                let end = input[start...].firstIndex(of: "/") ?? input.endIndex
                output.append(input[..<end])
                input = input[end...]
            }
        }
        return output.joined()
    }
}
