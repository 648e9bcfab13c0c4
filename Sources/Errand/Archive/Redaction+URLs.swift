import Foundation

// MARK: URLs, wherever they are written

extension Redaction {
    /// A URL, absolute or relative (a `Location` value), with its user information replaced
    /// whole (`http://<redacted>@host/`) and its masked query items' values replaced; the values
    /// taken out are added to `masked`, with the forms they take elsewhere: percent-decoded, and
    /// as the `Authorization: Basic` value an HTTP client builds from them.
    func url(string: String, masked: inout [String]) -> String {
        var text = string
        if let userInfo = Self.userInfoRange(in: text) {
            masked += Self.credentials(String(text[userInfo]))
            text.replaceSubrange(userInfo, with: Self.placeholder)
        }
        // The query is edited as text: URLComponents rejects a placeholder that is not percent-encoded.
        guard let queryStart = text.firstIndex(of: "?") else { return text }
        let queryEnd = text[queryStart...].firstIndex(of: "#") ?? text.endIndex
        let query = String(text[text.index(after: queryStart)..<queryEnd])
        return text[...queryStart] + formEncoded(query, masked: &masked) + text[queryEnd...]
    }

    /// `text` — an error's description, a header field, a body — with every URL in it masked as
    /// ``url(string:masked:)`` masks one; the values taken out are added to `masked`. A URL is
    /// what lies between white space, quotes and backslashes and holds a query or user
    /// information: a relative one (`/next?token=…`) is masked too.
    func maskingURLs(in text: String, masked: inout [String]) -> String {
        let utf8 = text.utf8
        // A query matters only when query items are masked; user information always does.
        let matters: (UInt8) -> Bool =
            queryItems.isEmpty
            ? { $0 == UInt8(ascii: "@") } : { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "@") }
        guard utf8.contains(where: matters) else { return text }
        var output = ""
        var start = utf8.startIndex
        var index = start
        func take(upTo end: String.Index) {
            let token = text[start..<end]
            let mayHoldSecrets = token.utf8.contains(where: matters)
            output += mayHoldSecrets ? url(string: String(token), masked: &masked) : String(token)
        }
        while index != utf8.endIndex {
            if Self.urlDelimiters.contains(utf8[index]) {
                take(upTo: index)
                output.unicodeScalars.append(Unicode.Scalar(utf8[index]))
                start = utf8.index(after: index)
            }
            utf8.formIndex(after: &index)
        }
        take(upTo: utf8.endIndex)
        return output
    }

    /// What ends a URL quoted in text: white space, quotes, a backslash (a JSON string's escape).
    private static let urlDelimiters: Set<UInt8> = Set(" \t\r\n\"'`\\".utf8)

    /// Where the user information of `text`'s authority is (`user:password` in
    /// `scheme://user:password@host`); `nil` when it has none.
    private static func userInfoRange(in text: String) -> Range<String.Index>? {
        guard let separator = text.range(of: "://") else { return nil }
        let authority = text[separator.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@"), at > authority.startIndex else { return nil }
        return authority.startIndex..<at
    }

    /// The secrets user information holds: itself, user and password, each as written and
    /// percent-decoded, and the `Basic` credentials built from them, which a transport sends in
    /// `Authorization` and a server may echo.
    private static func credentials(_ userInfo: String) -> [String] {
        let parts = userInfo.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let decoded = parts.map { $0.removingPercentEncoding ?? $0 }
        let user = decoded.first ?? ""
        let password = decoded.count > 1 ? decoded[1] : ""
        return [userInfo] + parts + decoded + [
            Data("\(user):\(password)".utf8).base64EncodedString(),
            Data(user.utf8).base64EncodedString(),
        ]
    }
}
